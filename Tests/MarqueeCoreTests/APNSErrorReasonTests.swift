import Foundation
import MarqueeCore
import Testing

@Suite("APNs error reasons")
struct APNSErrorReasonTests {
    @Test("every known reason, documented or observed, round-trips through its string")
    func roundTrip() {
        for reason in APNSErrorReason.allKnown {
            #expect(APNSErrorReason(reasonString: reason.reasonString) == reason)
            #expect(reason.status != nil)
        }
    }

    @Test("a reason this build does not know is kept verbatim")
    func unknownIsKept() {
        let reason = APNSErrorReason(reasonString: "SomethingNew")
        #expect(reason == .unknown("SomethingNew"))
        #expect(reason.reasonString == "SomethingNew")
        #expect(reason.status == nil)
    }

    @Test("Apple's spelling variants map to the documented reason")
    func variants() {
        #expect(APNSErrorReason(reasonString: "Service Unavailable") == .serviceUnavailable)
        #expect(APNSErrorReason(reasonString: "BadEnvironmentKeyInToken") == .badEnvironmentKeyIdInToken)
    }

    @Test("the observed BroadcastFeatureNotEnabled is a reason of its own, not the documented FeatureNotEnabled")
    func observedFeatureReason() {
        let observed = APNSErrorReason(reasonString: "BroadcastFeatureNotEnabled")
        #expect(observed == .broadcastFeatureNotEnabled)
        #expect(observed != .featureNotEnabled)
        #expect(observed.status == 400)
        #expect(APNSErrorReason.allKnown.contains(.broadcastFeatureNotEnabled))
    }

    @Test(
        "statuses follow Apple's tables",
        arguments: [
            (APNSErrorReason.badDeviceToken, 400), (.channelNotRegistered, 400), (.expiredProviderToken, 403),
            (.topicMismatch, 403), (.badPath, 404), (.methodNotAllowed, 405), (.unregistered, 410),
            (.payloadTooLarge, 413), (.tooManyRequests, 429), (.internalServerError, 500), (.shutdown, 503),
        ]
    )
    func statuses(reason: APNSErrorReason, status: Int) {
        #expect(reason.status == status)
    }

    @Test("decodes from an APNs error body")
    func decodesFromBody() throws {
        struct Body: Decodable {
            var reason: APNSErrorReason
            var timestamp: Int64?
        }
        let body = try JSONDecoder().decode(
            Body.self,
            from: Data(#"{"reason":"Unregistered","timestamp":1700000000123}"#.utf8)
        )
        #expect(body.reason == .unregistered)
        #expect(body.timestamp == 1_700_000_000_123)
    }
}
