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
        switch self {
        case .alert, .background, .mdm: bundleID
        case .liveactivity: bundleID + ".push-type.liveactivity"
        case .voip: bundleID + ".voip"
        case .complication: bundleID + ".complication"
        case .fileprovider: bundleID + ".pushkit.fileprovider"
        case .location: bundleID + ".location-query"
        case .pushtotalk: bundleID + ".voip-ptt"
        case .widgets: bundleID + ".push-type.widgets"
        case .controls: bundleID + ".push-type.controls"
        }
    }

    /// The `push-type` string of channel-management bodies (`LiveActivity`), which is spelled
    /// differently from the header.
    public static let channelBodyLiveActivity = "LiveActivity"
}
