/// The push types Marquee sends. APNs knows more (`alert`, `background`, `voip`, ...); the emulator
/// accepts all of them by name and Marquee itself sends Live Activity pushes only.
public enum APNSPushType: String, Sendable, Hashable, Codable, CaseIterable {
    case alert
    case background
    case location
    case voip
    case complication
    case fileprovider
    case mdm
    case liveactivity
    case pushtotalk
    case widgets
    case controls

    /// `apns-push-type` values are written both `liveactivity` and `Liveactivity` in Apple's
    /// documents, so they are compared without case.
    public init?(headerValue: String) {
        self.init(rawValue: headerValue.lowercased())
    }

    /// The `apns-topic` for this push type: the bundle ID plus the suffix APNs expects.
    public func topic(forBundleID bundleID: String) -> String {
        bundleID + topicSuffix
    }

    /// What APNs expects after the bundle ID in `apns-topic` (empty for the plain types).
    public var topicSuffix: String {
        switch self {
        case .alert, .background, .mdm: ""
        case .liveactivity: ".push-type.liveactivity"
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .location: ".location-query"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// The `push-type` string of channel-management bodies (`LiveActivity`), which is spelled
    /// differently from the header.
    public static let channelBodyLiveActivity = "LiveActivity"
}
