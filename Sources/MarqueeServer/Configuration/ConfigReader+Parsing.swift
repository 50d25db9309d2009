import Configuration

extension ConfigReader {
    /// The value at `key` converted by `parse`, `defaultValue` when absent; a present value that
    /// does not convert is an error naming the key (a silent fallback would hide a typo).
    func parsed<Value>(
        _ key: String,
        default defaultValue: Value,
        expected: String,
        isSecret: Bool = false,
        _ parse: (String) -> Value?
    ) throws(ConfigurationError) -> Value {
        guard let text = raw(key, isSecret: isSecret) else { return defaultValue }
        guard let value = parse(text) else {
            throw ConfigurationError(key: key, isSecret ? "is not \(expected)" : "'\(text)' is not \(expected)")
        }
        return value
    }

    /// The value at `key` as text, whatever type its provider gave it.
    func raw(_ key: String, isSecret: Bool = false) -> String? {
        let configKey = ConfigKey(stringLiteral: key)
        if let text = string(forKey: configKey, isSecret: isSecret) { return text }
        if let number = int(forKey: configKey, isSecret: isSecret) { return String(number) }
        if let number = double(forKey: configKey, isSecret: isSecret) { return String(number) }
        if let flag = bool(forKey: configKey, isSecret: isSecret) { return String(flag) }
        return nil
    }

    func integer(_ key: String, default defaultValue: Int, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        try parsed(key, default: defaultValue, expected: "a whole number in \(range.lowerBound)...\(range.upperBound)")
        {
            Int($0).flatMap { range.contains($0) ? $0 : nil }
        }
    }

    func seconds(_ key: String, default defaultValue: Double) throws(ConfigurationError) -> Double {
        try parsed(key, default: defaultValue, expected: "a number of seconds (0 or more)") {
            Double($0).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
        }
    }

    /// A length of time that must not be zero: a timeout.
    func positiveSeconds(_ key: String, default defaultValue: Double) throws(ConfigurationError) -> Double {
        try parsed(key, default: defaultValue, expected: "a number of seconds above 0") {
            Double($0).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
        }
    }

    func flag(_ key: String, default defaultValue: Bool) throws(ConfigurationError) -> Bool {
        try parsed(key, default: defaultValue, expected: "true or false") {
            switch $0.lowercased() {
            case "true", "1", "yes", "on": true
            case "false", "0", "no", "off": false
            default: nil
            }
        }
    }
}
