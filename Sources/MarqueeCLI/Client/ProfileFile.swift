import Foundation

/// `~/.config/marquee/profiles.json` (or `$MARQUEE_CONFIG`): named servers with their API keys,
/// so that a person types `--profile prod` instead of a key. It holds secrets, so it is written
/// readable by its owner only (0600) in a folder only its owner can enter (0700).
///
/// ```json
/// { "defaultProfile": "local",
///   "profiles": { "local": { "server": "http://127.0.0.1:8080", "apiKey": "mq_…" } } }
/// ```
struct ProfileFile: Codable, Sendable, Equatable {
    struct Profile: Codable, Sendable, Equatable {
        var server: String?
        var apiKey: String?
    }

    /// The profile used when none is named (`--profile`, `MARQUEE_PROFILE`).
    var defaultProfile: String?
    var profiles: [String: Profile] = [:]

    /// Where the file is: `$MARQUEE_CONFIG`, else `$XDG_CONFIG_HOME/marquee/profiles.json`, else
    /// `~/.config/marquee/profiles.json`.
    static func path(environment: [String: String]) -> String {
        if let path = environment["MARQUEE_CONFIG"], !path.isEmpty { return path }
        if let base = environment["XDG_CONFIG_HOME"], !base.isEmpty { return base + "/marquee/profiles.json" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.config/marquee/profiles.json"
    }

    /// The file at `path`, or nil when there is none. A file that exists but does not parse is a
    /// configuration error, never silently ignored.
    static func read(at path: String) throws(CLIFailure) -> ProfileFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .usage("cannot read the profile file \(path): \(error.localizedDescription)")
        }
        do {
            return try JSONDecoder().decode(ProfileFile.self, from: data)
        } catch {
            throw .usage(
                """
                the profile file \(path) is not valid: expected {\"profiles\": {\"NAME\": {\"server\": …, \
                \"apiKey\": …}}}
                """
            )
        }
    }

    /// Writes the file atomically with permissions 0600, creating its folder with 0700.
    func write(to path: String) throws(CLIFailure) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try FileManager.default.createDirectory(
                at: folder,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            let data = try encoder.encode(self)
            // Created 0600 before a byte is written, then renamed over the old file: the key is
            // never readable by others, not even for a moment, and a crash leaves the old file.
            let temporary = folder.appendingPathComponent(".profiles.\(UUID().uuidString).tmp")
            guard
                FileManager.default.createFile(
                    atPath: temporary.path,
                    contents: data,
                    attributes: [.posixPermissions: 0o600]
                )
            else {
                throw CLIFailure.usage("cannot write \(temporary.path)")
            }
            if rename(temporary.path, path) != 0 {
                try? FileManager.default.removeItem(at: temporary)
                throw CLIFailure.usage("cannot replace \(path): \(String(cString: strerror(errno)))")
            }
        } catch let error as CLIFailure {
            throw error
        } catch {
            throw .usage("cannot write the profile file \(path): \(error.localizedDescription)")
        }
    }
}
