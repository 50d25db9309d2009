import Foundation
import MarqueeCore
import MarqueeEngine
import Testing

/// The rules of channel bookkeeping, without any I/O.
@Suite("Channel policy")
struct ChannelPolicyTests {
    let start = Date(timeIntervalSince1970: 1_767_225_600)

    func channel(_ state: ChannelState, created: Date, updated: Date? = nil) -> BroadcastChannel {
        BroadcastChannel(
            appID: AppID(),
            eventID: EventID(),
            environment: .sandbox,
            storagePolicy: .noMessageStored,
            state: state,
            createdAt: created,
            updatedAt: updated
        )
    }

    @Test("the quota warns at 90% of Apple's cap and is exhausted at the cap")
    func quota() {
        let policy = ChannelPolicy(limit: 10_000)
        #expect(policy.warningAt == 9_000)
        #expect(!policy.quota(environment: .sandbox, used: 8_999).isWarning)
        #expect(policy.quota(environment: .sandbox, used: 9_000).isWarning)
        #expect(!policy.quota(environment: .sandbox, used: 9_999).isExhausted)
        #expect(policy.quota(environment: .sandbox, used: 10_000).isExhausted)
    }

    @Test("a creating row is abandoned only after the creation timeout, and only a creating row")
    func abandonment() {
        let policy = ChannelPolicy(creationTimeout: 120)
        let row = channel(.creating, created: start)
        #expect(!policy.isAbandoned(row, now: start.addingTimeInterval(119)))
        #expect(policy.isAbandoned(row, now: start.addingTimeInterval(120)))
        #expect(!policy.isAbandoned(channel(.active, created: start), now: start.addingTimeInterval(10_000)))
    }

    @Test("an orphan is deleted only after its grace period")
    func orphanGrace() {
        let policy = ChannelPolicy(orphanGracePeriod: 600)
        let orphan = channel(.orphaned, created: start)
        #expect(!policy.orphanIsDue(orphan, now: start.addingTimeInterval(599)))
        #expect(policy.orphanIsDue(orphan, now: start.addingTimeInterval(600)))
        #expect(!policy.orphanIsDue(channel(.deleting, created: start), now: start.addingTimeInterval(6_000)))
    }

    @Test("the states counted against Apple's cap are those that exist at APNs")
    func countedStates() {
        #expect(ChannelPolicy.countedStates == [.creating, .active, .deleting, .orphaned])
    }
}
