import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// What only a start job decides, on its own: which start a device gets, what of an earlier run's
/// crash window is sent again, what becomes of a start that got no answer, and which accepted
/// starts leave an update token to keep.
@Suite("Start outcome policy")
struct StartOutcomePolicyTests {
    func policy(
        _ uncertainStarts: UncertainStartPolicy = .skip,
        hasChannel: Bool = true,
        everyoneToken: Bool = false
    ) -> StartOutcomePolicy {
        StartOutcomePolicy(
            hasChannel: hasChannel,
            everyoneGetsUpdateToken: everyoneToken,
            uncertainStarts: uncertainStarts
        )
    }

    func send(kind: FanOutStateMachine.StartKind = .channel, unanswered: Int = 0) -> FanOutStateMachine.Send {
        FanOutStateMachine.Send(tokenRowID: 1, token: "00", kind: kind, attempt: 1 + unanswered, unanswered: unanswered)
    }

    func recipients(_ rows: ClosedRange<Int64>, version: String = "18.0") -> [AudienceRecipient] {
        rows.map { AudienceRecipient(rowID: $0, token: String(format: "%064llx", $0), iosVersion: version) }
    }

    @Test("iOS 18 gets the channel, 17.x and unknown versions an update token, and everyone one when asked")
    func startKinds() {
        let policy = policy()
        #expect(policy.kind(forIOSVersion: "18.0") == .channel)
        #expect(policy.kind(forIOSVersion: "26.1") == .channel)
        #expect(policy.kind(forIOSVersion: "17.4") == .updateToken)
        #expect(policy.kind(forIOSVersion: "17.2") == .updateToken)
        #expect(policy.kind(forIOSVersion: nil) == .updateToken)
        #expect(policy.kind(forIOSVersion: "not a version") == .updateToken)
        #expect(self.policy(everyoneToken: true).kind(forIOSVersion: "18.2") == .updateToken)
        #expect(self.policy(hasChannel: false).kind(forIOSVersion: "18.2") == .updateToken)
    }

    @Test("under skip and confirm, an earlier run's crash window is uncertain and unsent; the rest of the page goes")
    func crashWindowUnsent() {
        for uncertainStarts in [UncertainStartPolicy.skip, .confirm] {
            let page = policy(uncertainStarts).page(recipients(1...5), crashWindowEnd: 3)
            #expect(page.uncertain == [1, 2, 3])
            #expect(page.rows.map(\.rowID) == [4, 5])
            #expect(page.rows.allSatisfy { !$0.mayHaveArrived && $0.kind == .channel })
        }
    }

    @Test("under resend, an earlier run's crash window goes again, marked as may have arrived")
    func crashWindowResent() {
        let page = policy(.resend).page(recipients(1...4, version: "17.4"), crashWindowEnd: 2)
        #expect(page.uncertain.isEmpty)
        #expect(page.rows.map(\.rowID) == [1, 2, 3, 4])
        #expect(page.rows.map(\.mayHaveArrived) == [true, true, false, false])
        #expect(page.rows.allSatisfy { $0.kind == .updateToken })
    }

    @Test("a first run (no crash window) sends the whole page, as nothing may have arrived")
    func noCrashWindow() {
        let page = policy(.skip).page(recipients(1...3), crashWindowEnd: nil)
        #expect(page.uncertain.isEmpty)
        #expect(page.rows.map(\.rowID) == [1, 2, 3])
        #expect(page.rows.allSatisfy { !$0.mayHaveArrived })
    }

    @Test("an unanswered start is final under skip and confirm; under resend it goes again up to its bound")
    func unanswered() {
        #expect(policy(.skip).unanswered(send()) == .final)
        #expect(policy(.confirm).unanswered(send()) == .final)
        #expect(policy(.resend).unanswered(send()) == .resend)
        let bound = StartOutcomePolicy.maximumUnansweredResends
        #expect(policy(.resend).unanswered(send(unanswered: bound - 1)) == .resend)
        #expect(policy(.resend).unanswered(send(unanswered: bound)) == .final)
    }

    @Test("an accepted update-token start keeps its activity's update token; a channel start does not")
    func keepsUpdateToken() {
        #expect(policy().keepsUpdateToken(ofAccepted: send(kind: .updateToken)))
        #expect(!policy().keepsUpdateToken(ofAccepted: send(kind: .channel)))
        #expect(!PlainFanOutPolicy().keepsUpdateToken(ofAccepted: send(kind: .updateToken)))
        #expect(PlainFanOutPolicy().unanswered(send()) == .later)
    }
}
