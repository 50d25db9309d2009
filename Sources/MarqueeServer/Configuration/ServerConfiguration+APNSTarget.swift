import Configuration

extension ServerConfiguration.APNSTargetChoice {
    /// `apns.target` and, for `custom`, its endpoints and CA.
    init(reader: ConfigReader) throws(ConfigurationError) {
        switch reader.raw("apns.target") ?? "emulator" {
        case "emulator":
            self = .emulator
        case "apple":
            self = .apple
        case "custom":
            var endpoints: [String: String] = [:]
            for key in ServerConfiguration.customEndpointKeys {
                guard let url = reader.raw(key) else {
                    throw ConfigurationError(key: key, "is required with apns.target custom")
                }
                endpoints[key] = url
            }
            self = .custom(endpoints: endpoints, caFile: reader.raw("apns.caFile"))
        case let other:
            throw ConfigurationError(key: "apns.target", "'\(other)' is not emulator, apple or custom")
        }
    }
}
