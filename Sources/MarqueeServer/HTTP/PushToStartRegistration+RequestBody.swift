import MarqueeCore

extension PushToStartRegistration {
    /// The registration a `PUT /v1/push-to-start-tokens/{token}` body names, read as the generated
    /// type (`Components.Schemas.PushToStartTokenRegistration`) decodes it; nil for a body it would
    /// decode otherwise or refuse, which the generated route then answers (`TokenRegistrationMiddleware`).
    init?(requestBody body: JSONObject, token: String) {
        self.init(fields: body, token: token, knownKeys: Self.knownKeys)
    }

    /// The registration an item of a `POST /v1/push-to-start-tokens/batch` body names (the same
    /// fields and its `token`), read as the generated type (`Components.Schemas.PushToStartTokenBatchItem`)
    /// decodes it; nil for an item it would decode otherwise or refuse (`TokenBatchMiddleware`).
    init?(batchItem item: JSONObject) {
        guard case .string(let token) = item["token"] else { return nil }
        self.init(fields: item, token: token, knownKeys: Self.batchItemKeys)
    }

    private init?(fields body: JSONObject, token: String, knownKeys: Set<String>) {
        guard body.keys.allSatisfy(knownKeys.contains),
            case .string(let environmentName) = body["environment"],
            let environment = APNSEnvironment(rawValue: environmentName),
            case .string(let attributesType) = body["attributesType"]
        else { return nil }
        var registration = PushToStartRegistration(
            environment: environment,
            attributesType: attributesType,
            token: token
        )
        for key in body.keys {
            switch (key, body[key]) {
            case ("environment", _), ("attributesType", _), ("token", _): continue
            case ("deviceID", .string(let text)?): registration.deviceID = text
            case ("userID", .string(let text)?): registration.userID = text
            case ("iosVersion", .string(let text)?): registration.iosVersion = text
            case ("deviceToken", .string(let text)?): registration.deviceToken = text
            case ("frequentPushesEnabled", .bool(let enabled)?): registration.frequentPushesEnabled = enabled
            case ("tags", .array(let items)?):
                var tags: [String] = []
                for item in items {
                    guard case .string(let tag) = item else { return nil }
                    tags.append(tag)
                }
                registration.tags = tags
            default: return nil
            }
        }
        self = registration
    }

    /// The properties of `PushToStartTokenRegistration` in the OpenAPI document.
    private static let knownKeys: Set<String> = [
        "environment", "attributesType", "deviceID", "userID", "tags", "iosVersion", "frequentPushesEnabled",
        "deviceToken",
    ]

    /// The properties of `PushToStartTokenBatchItem`: those and the token.
    private static let batchItemKeys = knownKeys.union(["token"])
}
