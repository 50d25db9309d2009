import MarqueeAPNS

extension FanOutStateMachine {
    /// What an APNs error means for a fan-out's token, by the error's class.
    static func verdict(_ error: APNSError) -> FailureVerdict {
        switch error.failureClass {
        case .retryLater, .renewTokenAndRetry: .later
        case .tokenDead: .tokenDead
        case .channelGone, .appMisconfigured, .requestRejected: .rejected
        case .uncertain: .uncertain
        }
    }
}
