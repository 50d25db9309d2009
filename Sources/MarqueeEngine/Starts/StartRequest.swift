import MarqueeCore

/// What a publisher asks for when starting an event's Live Activity on its audience's devices.
/// Apple's objects (`attributes`, `contentState`, `alert`) pass through unchanged.
public struct StartRequest: Sendable, Hashable {
    public var environment: APNSEnvironment
    public var attributes: JSONObject
    public var contentState: JSONObject
    public var alert: JSONObject
    public var audience: StartAudience
    /// Ask every device for an update token (`input-push-token: 1`), even on iOS 18.
    public var inputPushToken: Bool
    /// Whether devices that register while the event is live get this start, and with what alert.
    public var lateJoiners: LateJoinChoice

    public init(
        environment: APNSEnvironment,
        attributes: JSONObject,
        contentState: JSONObject,
        alert: JSONObject,
        audience: StartAudience = StartAudience(),
        inputPushToken: Bool = false,
        lateJoiners: LateJoinChoice = LateJoinChoice()
    ) {
        self.environment = environment
        self.attributes = attributes
        self.contentState = contentState
        self.alert = alert
        self.audience = audience
        self.inputPushToken = inputPushToken
        self.lateJoiners = lateJoiners
    }
}
