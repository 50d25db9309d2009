/// One of APNs' two fully separate worlds. Device tokens, channel IDs and (optionally) signing keys
/// belong to exactly one of them.
public enum APNSEnvironment: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Apple calls it "development"; its hosts carry `.sandbox.`.
    case sandbox
    case production

    public var description: String { rawValue }

    /// Apple's public host for device pushes and broadcasts.
    public var pushHost: String {
        switch self {
        case .sandbox: "api.sandbox.push.apple.com"
        case .production: "api.push.apple.com"
        }
    }

    /// Apple's channel-management host.
    public var channelManagementHost: String {
        switch self {
        case .sandbox: "api-manage-broadcast.sandbox.push.apple.com"
        case .production: "api-manage-broadcast.push.apple.com"
        }
    }

    /// Channel management listens on 2195 (sandbox) and 2196 (production), not on 443.
    /// These are not the ports of the retired binary protocol, whatever their numbers suggest.
    public var channelManagementPort: Int {
        switch self {
        case .sandbox: 2195
        case .production: 2196
        }
    }
}
