import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// The app's current signing key is its newest by creation time, so a key being installed must
/// come after every stored one, whatever this replica's clock says.
@Suite("A new signing key's creation time")
struct SigningKeyCreationTimeTests {
    let appID = AppID()
    let now = Date(timeIntervalSince1970: 1_767_225_600)

    func key(_ keyID: String, createdAt: Date) -> SigningKey {
        SigningKey(appID: appID, keyID: keyID, teamID: "TEAM123456", createdAt: createdAt)
    }

    @Test("the first key, or one after the newest, is created now")
    func createdNow() {
        #expect(AppAdministration.creationTime(ofKeyAfter: [], now: now) == now)
        let older = [key("KEY1111111", createdAt: now.addingTimeInterval(-60))]
        #expect(AppAdministration.creationTime(ofKeyAfter: older, now: now) == now)
    }

    @Test("a key installed in the instant of the newest comes just after it, not tied with it")
    func sameInstant() {
        let stored = [key("KEY1111111", createdAt: now.addingTimeInterval(-60)), key("KEY2222222", createdAt: now)]
        #expect(AppAdministration.creationTime(ofKeyAfter: stored, now: now) == now.addingTimeInterval(0.001))
    }

    @Test("on a replica whose clock is behind the one that installed the newest, still after it")
    func clockBehind() {
        let stored = [key("KEY1111111", createdAt: now.addingTimeInterval(30))]
        let created = AppAdministration.creationTime(ofKeyAfter: stored, now: now)
        #expect(created > now.addingTimeInterval(30))
    }
}
