/// What a start fan-out needs of one push-to-start token of its audience: where the push goes and
/// which kind of start the device understands. A page of these is what the fan-out reads, a
/// thousand times per page, so it carries nothing else (a whole `PushToStartToken` costs its tags'
/// JSON and a dozen columns per row).
public struct AudienceRecipient: Sendable, Hashable {
    public var rowID: Int64
    public var token: String
    public var iosVersion: String?

    public init(rowID: Int64, token: String, iosVersion: String?) {
        self.rowID = rowID
        self.token = token
        self.iosVersion = iosVersion
    }

    public init(_ token: PushToStartToken) {
        self.init(rowID: token.rowID, token: token.token, iosVersion: token.iosVersion)
    }
}
