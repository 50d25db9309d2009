import ArgumentParser
import Foundation
import MarqueeClient

/// The options every command that talks to a server shares.
struct ClientOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The server's base URL (else MARQUEE_SERVER, a profile, or http://127.0.0.1:8080).",
            valueName: "url"
        )
    )
    var server: String?

    @Option(
        name: .customLong("api-key"),
        help: ArgumentHelp(
            """
            The API key, mq_… (else MARQUEE_API_KEY or a profile). Prefer those: a flag is visible to other users \
            in the process list.
            """,
            valueName: "key"
        )
    )
    var apiKey: String?

    @Option(
        help: ArgumentHelp(
            "A profile of the profile file (else MARQUEE_PROFILE, or the file's default).",
            valueName: "name"
        )
    )
    var profile: String?

    @Flag(help: "Print the server's JSON instead of a table, for scripts.")
    var json = false

    /// The server and key to use, from flags, the environment and the profile file (see
    /// `Connection.resolve`).
    func connection(in context: CLIContext) throws(CLIFailure) -> Connection {
        try Connection.resolve(server: server, apiKey: apiKey, profile: profile, environment: context.environment)
    }

    /// A client for the resolved connection.
    func client(in context: CLIContext) throws(CLIFailure) -> (MarqueeClient, Connection) {
        let connection = try connection(in: context)
        guard let apiKey = connection.apiKey else {
            throw .usage(
                """
                no API key: pass --api-key, set MARQUEE_API_KEY, or save one with `marquee profile set NAME \
                --server URL --api-key KEY`
                """
            )
        }
        return (
            MarqueeClient(serverURL: connection.serverURL, apiKey: apiKey, transport: context.transport), connection
        )
    }
}
