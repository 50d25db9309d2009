import ArgumentParser
import Foundation
import MarqueeClient

/// `marquee apps`: apps (tenants), their APNs signing key. Creating apps needs a deployment key;
/// an app's admin key manages its own app.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Create, list, show and update apps, and install their APNs signing key.",
        subcommands: [Create.self, List.self, Show.self, Update.self, SigningKey.self]
    )
}

extension AppsCommand {
    struct Create: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Creates an app (needs a deployment key).")

        @OptionGroup var options: ClientOptions

        @Option(help: "The app's name, for people.")
        var name: String

        @Option(name: .customLong("bundle-id"), help: "The iOS app's bundle ID, e.g. com.example.matchcentre.")
        var bundleID: String

        @Option(name: .customLong("team-id"), help: "The Apple developer team ID (10 characters).")
        var teamID: String

        @Option(name: .customLong("environment"), help: "An APNs environment the app uses (repeatable).")
        var environments: [Components.Schemas.Environment] = []

        func validate() throws {
            if environments.isEmpty { throw ValidationError("name at least one --environment (sandbox or production)") }
        }

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let request = Components.Schemas.CreateAppRequest(
                name: name,
                bundleID: bundleID,
                teamID: teamID,
                environments: environments
            )
            let response = try await client.send { try await $0.createApp(body: .json(request)).created.body.json }
            output(response, in: context) { app in "Created app \(app.id)\n\n" + AppsCommand.details(app) }
        }
    }

    struct List: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the apps the key may see.")

        @OptionGroup var options: ClientOptions

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { try await $0.listApps().ok.body.json }
            output(response, in: context) { list in
                var table = Table("id", "name", "bundle id", "team", "environments", "signing key")
                for app in list.apps {
                    table.append(
                        app.id,
                        app.name,
                        app.bundleID,
                        app.teamID,
                        AppsCommand.environments(app.environments),
                        app.signingKey?.keyID ?? "-"
                    )
                }
                return table.text
            }
        }
    }

    struct Show: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Shows an app and its signing key.")

        @OptionGroup var options: ClientOptions

        @Argument(help: "The app's ID (app_…).")
        var appID: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { [appID] in
                try await $0.getApp(path: .init(appID: appID)).ok.body.json
            }
            output(response, in: context) { AppsCommand.details($0) }
        }
    }

    struct Update: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Renames an app or changes its environments.")

        @OptionGroup var options: ClientOptions

        @Argument(help: "The app's ID (app_…).")
        var appID: String

        @Option(help: "A new name.")
        var name: String?

        @Option(
            name: .customLong("environment"),
            help: "The environments the app uses from now on (repeatable; replaces the list)."
        )
        var environments: [Components.Schemas.Environment] = []

        func validate() throws {
            if name == nil && environments.isEmpty {
                throw ValidationError("nothing to change: give --name or --environment")
            }
        }

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let request = Components.Schemas.UpdateAppRequest(
                name: name,
                environments: environments.isEmpty ? nil : environments
            )
            let response = try await client.send { [appID] in
                try await $0.updateApp(path: .init(appID: appID), body: .json(request)).ok.body.json
            }
            output(response, in: context) { "Updated app \($0.id)\n\n" + AppsCommand.details($0) }
        }
    }

    static func details(_ app: Components.Schemas.App) -> String {
        var pairs = [
            ("ID", app.id), ("Name", app.name), ("Bundle ID", app.bundleID), ("Team ID", app.teamID),
            ("Environments", environments(app.environments)), ("Created", Formatting.date(app.createdAt)),
        ]
        if let key = app.signingKey {
            pairs.append(
                (
                    "Signing key",
                    """
                    \(key.keyID) (team \(key.teamID), \(environments(key.environments)), installed \
                    \(Formatting.date(key.createdAt)))
                    """
                )
            )
        } else {
            pairs.append(
                ("Signing key", "none: install one with `marquee apps signing-key install \(app.id) AuthKey_KEYID.p8`")
            )
        }
        return Table.details(pairs)
    }

    /// A key restricted to no environment works in both.
    static func environments(_ environments: [Components.Schemas.Environment]) -> String {
        environments.isEmpty ? "sandbox,production" : environments.map(\.rawValue).joined(separator: ",")
    }
}
