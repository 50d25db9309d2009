import ArgumentParser
import Foundation
import MarqueeClient

extension AppsCommand {
    /// `marquee apps signing-key install APP FILE.p8`: the app's token-signing key from Apple's
    /// developer portal. A new key replaces the old one (rotation).
    struct SigningKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "signing-key",
            abstract: "Installs the app's APNs signing key (.p8).",
            subcommands: [Install.self]
        )
    }
}

extension AppsCommand.SigningKey {
    struct Install: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Installs a .p8 signing key; a new one replaces the old.",
            discussion: """
                The key is sealed at rest by the server and never shown again. The key ID is taken \
                from Apple's file name (AuthKey_ABC123DEFG.p8) unless --key-id gives it.
                """
        )

        @OptionGroup var options: ClientOptions

        @Argument(help: "The app's ID (app_…).")
        var appID: String

        @Argument(
            help: "The .p8 file Apple's developer portal gave (PKCS#8 P-256 PEM).",
            completion: .file(extensions: ["p8"])
        )
        var file: String

        @Option(name: .customLong("key-id"), help: "Apple's 10-character key ID (default: from AuthKey_KEYID.p8).")
        var keyID: String?

        @Option(name: .customLong("team-id"), help: "The team that owns the key (default: the app's team).")
        var teamID: String?

        @Option(
            name: .customLong("environment"),
            help: "An environment the key is restricted to in Apple's portal (repeatable; none: both)."
        )
        var environments: [Components.Schemas.Environment] = []

        func run(client: MarqueeClient, context: CLIContext) async throws {
            guard let keyID = keyID ?? Self.keyID(fromFileName: file) else {
                throw CLIFailure.usage("give --key-id: \(file) is not named AuthKey_KEYID.p8")
            }
            let pem: String
            do {
                pem = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw CLIFailure.usage("cannot read \(file): \(error.localizedDescription)")
            }
            let upload = Components.Schemas.SigningKeyUpload(
                keyID: keyID,
                teamID: teamID,
                privateKey: pem,
                environments: environments.isEmpty ? nil : environments
            )
            let response = try await client.send { [appID] in
                try await $0.putSigningKey(path: .init(appID: appID), body: .json(upload)).ok.body.json
            }
            output(response, in: context) { key in
                """
                Installed signing key \(key.keyID) (team \(key.teamID), \
                \(AppsCommand.environments(key.environments))) for \(appID)
                """
            }
        }

        /// `AuthKey_ABC123DEFG.p8` → `ABC123DEFG`, as Apple names downloaded keys.
        static func keyID(fromFileName path: String) -> String? {
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            guard name.hasPrefix("AuthKey_") else { return nil }
            let id = String(name.dropFirst("AuthKey_".count))
            return id.isEmpty ? nil : id
        }
    }
}
