import Configuration
import SystemPackage

/// Where `marquee serve` and `marquee emulator` read their keys: flags over the environment
/// (`MARQUEE_` + the key in upper snake case) over a JSON file over defaults. One order for both
/// commands, so a key means the same wherever it is set.
enum ConfigurationSources {
    /// A reader over `flags` (their keys as the file's), the environment and `file`; the keys in
    /// `secretKeys` are secrets wherever they come from (never printed, logged or shown in an error).
    static func reader(flags: [String: String], file: String?, secretKeys: Set<String>) async throws -> ConfigReader {
        var providers: [any ConfigProvider] = [
            values(flags, secretKeys: secretKeys), environment(secretKeys: secretKeys),
        ]
        if let file {
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: .init(file)))
            } catch {
                throw ConfigurationError(key: "--config", "cannot read \(file) as JSON configuration: \(error)")
            }
        }
        return ConfigReader(providers: providers)
    }

    /// A reader over `values` and, unless `environment` is false, the environment (tests, the CLI).
    static func reader(values: [String: String], environment: Bool, secretKeys: Set<String>) -> ConfigReader {
        var providers: [any ConfigProvider] = [self.values(values, secretKeys: secretKeys)]
        if environment { providers.append(self.environment(secretKeys: secretKeys)) }
        return ConfigReader(providers: providers)
    }

    static func values(_ values: [String: String], secretKeys: Set<String>) -> some ConfigProvider {
        InMemoryProvider(
            values: Dictionary(
                uniqueKeysWithValues: values.map {
                    (
                        AbsoluteConfigKey(stringLiteral: $0.key),
                        ConfigValue(.string($0.value), isSecret: secretKeys.contains($0.key))
                    )
                }
            )
        )
    }

    static func environment(secretKeys: Set<String>) -> some ConfigProvider {
        EnvironmentVariablesProvider(secretsSpecifier: .specific(Set(secretKeys.map(environmentName)))).prefixKeys(
            with: "marquee"
        )
    }

    /// The environment variable of a key: `MARQUEE_` and the key in upper snake case, a lower-case
    /// letter followed by an upper-case one starting a new word (`emulator.appKey` →
    /// `MARQUEE_EMULATOR_APP_KEY`).
    static func environmentName(_ key: String) -> String {
        var name = "MARQUEE_"
        var previous: Character?
        for character in key {
            if character == "." {
                name.append("_")
            } else {
                if character.isUppercase, let previous, previous.isLowercase { name.append("_") }
                name += character.uppercased()
            }
            previous = character
        }
        return name
    }
}
