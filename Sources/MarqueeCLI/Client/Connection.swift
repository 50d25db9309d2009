import Foundation
import MarqueeClient

/// The server and API key a command uses, and where each came from (so that an error can say
/// where to look without ever showing the key).
struct Connection: Sendable, Equatable {
    enum Source: Sendable, Equatable, CustomStringConvertible {
        case flag
        case environment(String)
        case profile(String)
        case builtInDefault

        var description: String {
            switch self {
            case .flag: "the command line"
            case .environment(let name): "the environment (\(name))"
            case .profile(let name): "profile \"\(name)\""
            case .builtInDefault: "the default"
            }
        }
    }

    static let defaultServer = "http://127.0.0.1:8080"

    var serverURL: URL
    var serverSource: Source
    var apiKey: String?
    var apiKeySource: Source?

    /// Resolves each of server and key: a flag first; then a profile named by `--profile`; then
    /// `MARQUEE_SERVER` / `MARQUEE_API_KEY`; then the profile of `MARQUEE_PROFILE` or the file's
    /// default. A profile named on the command line beats the environment, so that
    /// `--profile prod` never sends a key exported for another server to prod's.
    static func resolve(
        server: String?,
        apiKey: String?,
        profile: String?,
        environment: [String: String]
    ) throws(CLIFailure) -> Connection {
        let path = ProfileFile.path(environment: environment)
        let file = try ProfileFile.read(at: path)
        let explicitProfile = try profile.map { name throws(CLIFailure) in try named(name, in: file, path: path) }
        let implicitName = environment["MARQUEE_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? file?.defaultProfile
        let implicitProfile: (String, ProfileFile.Profile)?
        if explicitProfile == nil, let implicitName {
            implicitProfile = try named(implicitName, in: file, path: path)
        } else {
            implicitProfile = nil
        }

        func pick(_ flag: String?, _ variable: String, _ field: (ProfileFile.Profile) -> String?) -> (String, Source)? {
            if let flag, !flag.isEmpty { return (flag, .flag) }
            if let (name, profile) = explicitProfile, let value = field(profile) { return (value, .profile(name)) }
            if let value = environment[variable], !value.isEmpty { return (value, .environment(variable)) }
            if let (name, profile) = implicitProfile, let value = field(profile) { return (value, .profile(name)) }
            return nil
        }

        let (serverText, serverSource) = pick(server, "MARQUEE_SERVER", \.server) ?? (defaultServer, .builtInDefault)
        guard let serverURL = MarqueeClient.serverURL(serverText) else {
            throw .usage(
                "the server URL \"\(serverText)\" from \(serverSource) is not an http:// or https:// URL with a host"
            )
        }
        let key = pick(apiKey, "MARQUEE_API_KEY", \.apiKey)
        return Connection(serverURL: serverURL, serverSource: serverSource, apiKey: key?.0, apiKeySource: key?.1)
    }

    private static func named(
        _ name: String,
        in file: ProfileFile?,
        path: String
    ) throws(CLIFailure) -> (String, ProfileFile.Profile) {
        guard let profile = file?.profiles[name] else {
            let known = file?.profiles.keys.sorted().joined(separator: ", ") ?? ""
            throw .usage("no profile \"\(name)\" in \(path)" + (known.isEmpty ? "" : " (profiles: \(known))"))
        }
        return (name, profile)
    }
}
