/// A push-to-start token row by its natural key: what a registration writes, what the late-join
/// hook looks at.
public struct RegisteredTokenKey: Sendable, Hashable {
    public var environment: APNSEnvironment
    public var attributesType: String
    /// Lower-case hex.
    public var token: String

    public init(environment: APNSEnvironment, attributesType: String, token: String) {
        self.environment = environment
        self.attributesType = attributesType
        self.token = token
    }
}

/// A device's row by the app's device ID: what a registration with a new token rotates.
public struct RegisteredDeviceKey: Sendable, Hashable {
    public var environment: APNSEnvironment
    public var attributesType: String
    public var deviceID: String

    public init(environment: APNSEnvironment, attributesType: String, deviceID: String) {
        self.environment = environment
        self.attributesType = attributesType
        self.deviceID = deviceID
    }
}

extension PushToStartRegistration {
    /// The row this registration writes.
    public var tokenKey: RegisteredTokenKey {
        RegisteredTokenKey(environment: environment, attributesType: attributesType, token: token)
    }

    /// The device whose row this registration keeps, when it names one.
    public var deviceKey: RegisteredDeviceKey? {
        deviceID.map { RegisteredDeviceKey(environment: environment, attributesType: attributesType, deviceID: $0) }
    }
}

extension PushToStartToken {
    /// The row's natural key.
    public var key: RegisteredTokenKey {
        RegisteredTokenKey(environment: environment, attributesType: attributesType, token: token)
    }
}
