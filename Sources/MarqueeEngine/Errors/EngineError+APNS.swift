import MarqueeAPNS
import MarqueeCore

extension EngineError {
    /// What an APNs failure means for the caller of a use case.
    init(apns error: APNSError, bundleID: String) {
        switch error {
        case .rejected(let rejection):
            switch rejection.reason {
            case .featureNotEnabled, .broadcastFeatureNotEnabled:
                self = .broadcastNotEnabled(bundleID: bundleID, reason: rejection.reason)
            case .cannotCreateChannelConfig:
                self = .conflict(
                    """
                    APNs refused to create another channel (CannotCreateChannelConfig): the app is at Apple's \
                    cap; delete channels of finished events
                    """
                )
            default:
                if rejection.failureClass == .retryLater {
                    self = .apnsUnavailable("APNs answered \(rejection.status) \(rejection.reason.reasonString)")
                } else {
                    self = .apnsRejected(status: rejection.status, reason: rejection.reason)
                }
            }
        case .connectionFailed, .uncertain, .clientShutDown, .cancelled:
            self = .apnsUnavailable(error.description)
        case .payloadTooLarge, .invalidRequest, .invalidResponse, .tokenSigningFailed, .invalidConfiguration:
            self = .apnsUnavailable(error.description)
        }
    }
}
