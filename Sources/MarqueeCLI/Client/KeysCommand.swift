import ArgumentParser
import Foundation
import MarqueeClient

/// `marquee keys`: an app's API keys. A key is shown once, when it is created.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, list and revoke an app's API keys.",
        discussion: """
            Roles: admin (the app, its signing key and keys), publisher (events, channels, \
            broadcasts) and app (tokens, channel IDs). Needs the deployment key or the app's admin key.
            """,
        subcommands: [Create.self, List.self, Revoke.self]
    )
}

extension KeysCommand {
    struct Create: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Creates an API key; the key is printed once, now.")

        @OptionGroup var options: ClientOptions

        @Option(help: "The app's ID (app_…).")
        var app: String

        @Option(help: "admin, publisher or app.")
        var role: Components.Schemas.Role

        @Option(help: "A label to recognise the key by, e.g. match-day scheduler.")
        var label: String?

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let request = Components.Schemas.CreateAPIKeyRequest(role: role, label: label)
            let response = try await client.send { [app] in
                try await $0.createAPIKey(path: .init(appID: app), body: .json(request)).created.body.json
            }
            // The one place a key is printed: the person asked for it, and it exists nowhere else.
            output(response, in: context) { created in
                """
                Created \(created.apiKey.role.rawValue) key \
                \(created.apiKey.id)\(created.apiKey.label.isEmpty ? "" : " (\(created.apiKey.label))"). \
                It is shown only now; keep it safe:

                    \(created.key ?? "(not in this answer: it replays an earlier creation, which alone showed the key)")
                """
            }
        }
    }

    struct List: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Lists an app's API keys (never their secrets).")

        @OptionGroup var options: ClientOptions

        @Option(help: "The app's ID (app_…).")
        var app: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { [app] in
                try await $0.listAPIKeys(path: .init(appID: app)).ok.body.json
            }
            output(response, in: context) { list in
                var table = Table("id", "role", "prefix", "label", "created", "revoked")
                for key in list.apiKeys {
                    table.append(
                        key.id,
                        key.role.rawValue,
                        key.prefix,
                        key.label.isEmpty ? "-" : key.label,
                        Formatting.date(key.createdAt),
                        key.revokedAt.map(Formatting.date) ?? "-"
                    )
                }
                return table.text
            }
        }
    }

    struct Revoke: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Revokes an API key at once.")

        @OptionGroup var options: ClientOptions

        @Option(help: "The app's ID (app_…).")
        var app: String

        @Argument(help: "The key's ID (key_…), as `marquee keys list` shows it.")
        var keyID: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { [app, keyID] in
                try await $0.revokeAPIKey(path: .init(appID: app, keyID: keyID)).noContent
            }
            _ = response
            // A 204 has no body: --json gets a small document of what happened instead.
            options.json ? context.printJSON(["revoked": keyID]) : context.print("Revoked \(keyID)")
        }
    }
}
