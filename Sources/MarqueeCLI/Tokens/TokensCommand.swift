import ArgumentParser
import Foundation
import MarqueeClient

/// `marquee tokens`: the push-to-start token registry, with an app key.
struct TokensCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Import push-to-start tokens from CSV or JSON Lines files, show and delete tokens (with an app key).",
        subcommands: [Import.self, Show.self, Delete.self]
    )
}

extension TokensCommand {
    struct Show: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Shows a push-to-start token, with whether APNs retired it."
        )

        @OptionGroup var options: ClientOptions

        @Argument(help: "The token as hex.")
        var token: String

        @Option(help: "The token's environment.")
        var environment: Components.Schemas.Environment

        @Option(name: .customLong("attributes-type"), help: "The ActivityKit attributes type it was registered for.")
        var attributesType: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let query = Operations.GetPushToStartToken.Input.Query(
                environment: environment,
                attributesType: attributesType
            )
            let response = try await client.send { [token] in
                try await $0.getPushToStartToken(path: .init(token: token), query: query).ok.body.json
            }
            output(response, in: context) { token in
                var pairs = [
                    ("Token", token.token), ("Environment", token.environment.rawValue),
                    ("Attributes type", token.attributesType),
                    ("Valid", token.valid ? "yes" : "no"),
                ]
                if let reason = token.invalidationReason {
                    pairs.append(("Retired", "\(reason) at \(Formatting.date(token.invalidatedAt))"))
                }
                pairs += [
                    ("Device ID", token.deviceID ?? "-"), ("User ID", token.userID ?? "-"),
                    ("Tags", Formatting.list(token.tags)),
                    ("iOS version", token.iosVersion ?? "-"),
                    ("Frequent pushes", token.frequentPushesEnabled ? "enabled" : "disabled"),
                    ("First registered", Formatting.date(token.firstRegisteredAt)),
                    ("Last registered", Formatting.date(token.lastRegisteredAt)),
                ]
                return Table.details(pairs)
            }
        }
    }

    struct Delete: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Unregisters a push-to-start token.")

        @OptionGroup var options: ClientOptions

        @Argument(help: "The token as hex.")
        var token: String

        @Option(help: "The token's environment.")
        var environment: Components.Schemas.Environment

        @Option(name: .customLong("attributes-type"), help: "The ActivityKit attributes type it was registered for.")
        var attributesType: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let query = Operations.UnregisterPushToStartToken.Input.Query(
                environment: environment,
                attributesType: attributesType
            )
            _ = try await client.send { [token] in
                try await $0.unregisterPushToStartToken(path: .init(token: token), query: query).noContent
            }
            options.json ? context.printJSON(["deleted": token]) : context.print("Deleted token …\(token.suffix(8))")
        }
    }
}
