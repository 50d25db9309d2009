/// A configuration value Marquee cannot start with; names the key, never a secret's value.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var key: String
    public var problem: String

    public init(key: String, _ problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "configuration key \(key): \(problem)" }
}
