import Foundation
import MarqueeCore
import Testing

@testable import MarqueeAPNS

@Suite("Error classification")
struct APNSErrorClassificationTests {
    @Test(
        "every known reason, documented or observed, falls into exactly the class callers act on",
        arguments: APNSErrorReason.allKnown
    )
    func documentedReasons(reason: APNSErrorReason) throws {
        let status = try #require(reason.status)
        let expected: APNSFailureClass =
            switch reason {
            case .expiredProviderToken: .renewTokenAndRetry
            case .unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic: .tokenDead
            case .channelNotRegistered, .badChannelId: .channelGone
            case .broadcastFeatureNotEnabled, .featureNotEnabled: .appMisconfigured
            case .tooManyRequests, .tooManyProviderTokenUpdates, .internalServerError, .serviceUnavailable, .shutdown:
                .retryLater
            default: .requestRejected
            }
        #expect(APNSRejection(status: status, reason: reason).failureClass == expected)
        if expected == .requestRejected { #expect((400..<500).contains(status)) }
    }

    @Test(
        """
        a bundle without the Broadcast capability is the app's configuration, whichever spelling APNs uses, and \
        never a bad request
        """
    )
    func featureNotEnabled() {
        for reason in [APNSErrorReason.broadcastFeatureNotEnabled, .featureNotEnabled] {
            let error = APNSError.rejected(APNSRejection(status: 400, reason: reason))
            #expect(error.failureClass == .appMisconfigured)
            #expect(error.failureClass != .requestRejected)
            #expect(error.reason == reason)
        }
    }

    @Test(
        """
        a DELETE refused with 404 BadPath or ChannelNotRegistered means the channel is already gone; a malformed \
        ID or anything else does not
        """
    )
    func deletionAnswers() {
        #expect(APNSClient.meansChannelAlreadyGone(APNSRejection(status: 404, reason: .badPath)))
        #expect(APNSClient.meansChannelAlreadyGone(APNSRejection(status: 400, reason: .channelNotRegistered)))
        #expect(!APNSClient.meansChannelAlreadyGone(APNSRejection(status: 400, reason: .badChannelId)))
        #expect(!APNSClient.meansChannelAlreadyGone(APNSRejection(status: 405, reason: .methodNotAllowed)))
        #expect(!APNSClient.meansChannelAlreadyGone(APNSRejection(status: 403, reason: .topicMismatch)))
        #expect(!APNSClient.meansChannelAlreadyGone(APNSRejection(status: 400, reason: .broadcastFeatureNotEnabled)))
        #expect(!APNSClient.meansChannelAlreadyGone(APNSRejection(status: 503, reason: .serviceUnavailable)))
        #expect(!APNSClient.meansChannelAlreadyGone(APNSRejection(status: 404, reason: .unknown("NotFound"))))
    }

    @Test("unknown reasons are classed by status: 5xx and 429 retry, 410 kills the token, other 4xx are final")
    func unknownReasons() {
        #expect(APNSRejection(status: 503, reason: .unknown("Service Unavailable!")).failureClass == .retryLater)
        #expect(APNSRejection(status: 429, reason: .unknown("Slow")).failureClass == .retryLater)
        #expect(APNSRejection(status: 410, reason: .unknown("Gone")).failureClass == .tokenDead)
        #expect(APNSRejection(status: 400, reason: .unknown("New")).failureClass == .requestRejected)
    }

    @Test("a 410 carries its timestamp in milliseconds")
    func timestamp() {
        let rejection = APNSRejection(status: 410, reason: .unregistered, timestampMilliseconds: 1_767_225_600_123)
        #expect(rejection.tokenInvalidSince?.timeIntervalSince1970 == 1_767_225_600.123)
    }

    @Test("connection failures retry later; refusals before sending are final")
    func clientErrors() {
        #expect(APNSError.connectionFailed("reset").failureClass == .retryLater)
        #expect(APNSError.payloadTooLarge(size: 5000, limit: 4096).failureClass == .requestRejected)
        #expect(APNSError.payloadTooLarge(size: 5000, limit: 4096).description.contains("5000"))
    }

    @Test("back-off grows exponentially up to its ceiling and is jittered below it")
    func backoff() {
        let policy = APNSRetryPolicy(maximumAttempts: 5, initialDelay: .milliseconds(100), maximumDelay: .seconds(1))
        #expect(policy.ceilingDelay(beforeRetry: 1) == .milliseconds(100))
        #expect(policy.ceilingDelay(beforeRetry: 3) == .milliseconds(400))
        #expect(policy.ceilingDelay(beforeRetry: 10) == .seconds(1))
        for retry in 1...6 {
            let delay = policy.delay(beforeRetry: retry)
            #expect(delay >= .zero && delay <= policy.ceilingDelay(beforeRetry: retry))
        }
    }
}
