import MarqueeCore

/// What a token registration must look like.
enum TokenRules {
    /// APNs tokens are hex of no fixed length (64 characters is usual, 160 has been seen): Marquee
    /// takes up to this many characters.
    static let maximumTokenLength = 400
    static let maximumTags = 32
    static let maximumTagLength = 64
    static let maximumIdentifierLength = 256

    static func validate(
        _ registration: PushToStartRegistration,
        app: App,
        pointer: String,
        into validation: inout InputValidation
    ) {
        if let error = checkHex(registration.token, pointer: "\(pointer)/token") { validation.add(error) }
        validation.require(
            app.environments.contains(registration.environment),
            "\(pointer)/environment",
            "the app does not use the \(registration.environment) environment"
        )
        validation.require(
            AttributesTypeRule.isValid(registration.attributesType),
            "\(pointer)/attributesType",
            "must be a Swift type name of up to 128 characters (letters, digits, _ and .)"
        )
        if let deviceID = registration.deviceID {
            validation.require(
                deviceID.unicodeScalars.count <= maximumIdentifierLength,
                "\(pointer)/deviceID",
                "must be at most \(maximumIdentifierLength) characters"
            )
        }
        if let userID = registration.userID {
            validation.require(
                userID.unicodeScalars.count <= maximumIdentifierLength,
                "\(pointer)/userID",
                "must be at most \(maximumIdentifierLength) characters"
            )
        }
        validation.require(registration.tags.count <= maximumTags, "\(pointer)/tags", "at most \(maximumTags) tags")
        for (index, tag) in registration.tags.enumerated()
        where tag.isEmpty || tag.unicodeScalars.count > maximumTagLength {
            validation.add(FieldError("\(pointer)/tags/\(index)", "must be 1–\(maximumTagLength) characters"))
        }
        if let deviceToken = registration.deviceToken,
            let error = checkHex(deviceToken, pointer: "\(pointer)/deviceToken")
        {
            validation.add(error)
        }
        if let version = registration.iosVersion, !isIOSVersion(version) {
            validation.add(FieldError("\(pointer)/iosVersion", "must be a version such as 17.2 or 18.0.1"))
        }
    }

    /// A field error unless `token` is hex of a plausible length.
    static func checkHex(_ token: String, pointer: @autoclosure () -> String) -> FieldError? {
        guard Hex.isHex(token), token.utf8.count <= maximumTokenLength else {
            return FieldError(
                pointer(),
                "must be the token as hex (an even number of 0-9 and a-f, at most \(maximumTokenLength))"
            )
        }
        return nil
    }

    /// `major.minor` or `major.minor.patch`, each a number.
    static func isIOSVersion(_ value: String) -> Bool {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        return (1...3).contains(parts.count)
            && parts.allSatisfy {
                !$0.isEmpty && $0.count <= 4
                    && $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            }
    }
}
