/// The `alert` of a Live Activity push. A start push must carry one; on update and end it lights the
/// screen or shows the Dynamic Island. In Live Activity payloads `sound` lives inside `alert`.
public struct LiveActivityAlert: Sendable, Hashable {
    public var title: LiveActivityAlertText
    public var body: LiveActivityAlertText
    /// A sound name from the app bundle, or `"default"`.
    public var sound: String?

    public init(title: LiveActivityAlertText, body: LiveActivityAlertText, sound: String? = nil) {
        self.title = title
        self.body = body
        self.sound = sound
    }

    /// The `alert` object as APNs expects it.
    public var jsonObject: JSONObject {
        var object = JSONObject()
        object["title"] = title.jsonValue
        object["body"] = body.jsonValue
        if let sound { object["sound"] = .string(sound) }
        return object
    }
}

/// An alert title or body: a plain string, or a key into the app's `Localizable.strings` with its
/// format arguments, which the device localizes.
public enum LiveActivityAlertText: Sendable, Hashable, ExpressibleByStringLiteral {
    case plain(String)
    case localized(key: String, arguments: [String] = [])

    public init(stringLiteral value: String) {
        self = .plain(value)
    }

    public var jsonValue: JSONValue {
        switch self {
        case .plain(let text):
            .string(text)
        case .localized(let key, let arguments):
            ["loc-key": .string(key), "loc-args": .array(arguments.map(JSONValue.string))]
        }
    }
}
