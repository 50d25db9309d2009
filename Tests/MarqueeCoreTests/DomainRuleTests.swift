import Foundation
import MarqueeCore
import Testing

@Suite("Domain rules")
struct DomainRuleTests {
    @Test(
        "a timestamp is max(now, last + 1)",
        arguments: [
            (nil as Int64?, Int64(100), Int64(100)), (99, 100, 100), (100, 100, 101), (150, 100, 151),
        ]
    )
    func monotonicTimestamp(last: Int64?, now: Int64, expected: Int64) {
        #expect(MonotonicTimestamp.next(after: last, now: now) == expected)
    }

    @Test("a 410 retires a token only when APNs' verdict is newer than its last registration")
    func invalidationRule() {
        let registered = Date(timeIntervalSince1970: 1_767_225_600)
        let ms = Int64(registered.timeIntervalSince1970 * 1000)
        #expect(
            TokenInvalidation(reason: .unregistered, apnsTimestampMilliseconds: ms + 1).retires(
                tokenLastRegisteredAt: registered
            )
        )
        #expect(
            !TokenInvalidation(reason: .unregistered, apnsTimestampMilliseconds: ms).retires(
                tokenLastRegisteredAt: registered
            )
        )
        #expect(
            !TokenInvalidation(reason: .expiredToken, apnsTimestampMilliseconds: ms - 5000).retires(
                tokenLastRegisteredAt: registered
            )
        )
    }

    @Test(
        """
        a 410 ends an activity only for the update token it holds now, seen dead at or after that token's \
        receipt
        """
    )
    func activityUpdateTokenInvalidationRule() {
        let received = Date(timeIntervalSince1970: 1_767_225_600)
        let ms = Int64(received.timeIntervalSince1970 * 1000)
        func gone(_ milliseconds: Int64, token: String?) -> TokenInvalidation {
            TokenInvalidation(reason: .unregistered, apnsTimestampMilliseconds: milliseconds, token: token)
        }
        #expect(gone(ms, token: "aa02").endsActivity(currentUpdateToken: "aa02", receivedAt: received))
        #expect(gone(ms + 1, token: nil).endsActivity(currentUpdateToken: "aa02", receivedAt: received))
        #expect(!gone(ms - 1, token: "aa02").endsActivity(currentUpdateToken: "aa02", receivedAt: received))
        #expect(!gone(ms + 5000, token: "aa01").endsActivity(currentUpdateToken: "aa02", receivedAt: received))
    }

    @Test("a channel's lifecycle allows only forward moves")
    func channelTransitions() {
        #expect(ChannelState.creating.canTransition(to: .active))
        #expect(ChannelState.active.canTransition(to: .deleting))
        #expect(ChannelState.deleting.canTransition(to: .deleted))
        #expect(ChannelState.orphaned.canTransition(to: .deleting))
        #expect(!ChannelState.deleted.canTransition(to: .active))
        #expect(!ChannelState.active.canTransition(to: .creating))
        #expect(!ChannelState.orphaned.canTransition(to: .active))
        #expect(ChannelState.live == [.creating, .active, .deleting])
    }

    @Test("an existing idempotency key answers by request hash and response")
    func idempotencyClaims() {
        let response = StoredResponse(status: 200, body: [])
        #expect(IdempotencyClaim(existingRequestHash: "a", requestHash: "b", response: response) == .mismatch)
        #expect(IdempotencyClaim(existingRequestHash: "a", requestHash: "a", response: nil) == .inProgress)
        #expect(
            IdempotencyClaim(existingRequestHash: "a", requestHash: "a", response: response) == .completed(response)
        )
    }

    @Test("an activity's current update token is its newest unretired one")
    func currentUpdateToken() {
        let now = Date()
        var activity = Activity(appID: AppID(), eventID: EventID(), environment: .sandbox, createdAt: now)
        #expect(activity.currentUpdateToken == nil)
        activity.updateTokens = [
            UpdateTokenRecord(token: "old", receivedAt: now, retiredAt: now),
            UpdateTokenRecord(token: "new", receivedAt: now),
        ]
        #expect(activity.currentUpdateToken == "new")
    }

    @Test("secrets and tokens stay out of descriptions")
    func descriptions() {
        let key = APIKey(
            appID: AppID(),
            role: .admin,
            prefix: "abc123",
            secretHash: [1, 2, 3],
            label: "ops",
            createdAt: Date()
        )
        #expect(key.description == "APIKey(abc123, admin)")
        let token = PushToStartToken(
            rowID: 7,
            appID: AppID(),
            environment: .sandbox,
            attributesType: "A",
            token: "0123456789abcdef0123456789abcdef",
            deviceID: nil,
            userID: nil,
            tags: [],
            iosVersion: nil,
            frequentPushesEnabled: false,
            firstRegisteredAt: Date(),
            lastRegisteredAt: Date(),
            invalidatedAt: nil,
            invalidationReason: nil
        )
        #expect(token.description == "PushToStartToken(#7, …89abcdef)")
    }
}
