import Foundation
import MarqueeTesting
import Testing

/// The exit codes scripts rely on, and what the errors say on standard error.
@Suite("marquee exit codes")
struct ExitCodeTests {
    @Test(
        """
        a bad key is 3, an unknown event 4, an invalid body 5; errors name the fields and the request id, never \
        the key
        """,
        arguments: TestBackend.allCases
    )
    func errorAnswers(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()

            let badKey = "mq_nosuchkey_0123456789abcdef"
            let unauthorized = await server.cli(key: badKey)("events", "list")
            #expect(unauthorized.code == 3, "\(unauthorized)")
            #expect(unauthorized.standardError.hasPrefix("error: A valid API key is required"))
            #expect(!unauthorized.standardError.contains(badKey))
            #expect(!unauthorized.standardOutput.contains(badKey))

            // The app's own key may not create events: 403 is 3 as well.
            let forbidden = await server.cli(key: app.appKey).run(
                ["events", "put", "ars-che"] + EventsCommandTests.event
            )
            #expect(forbidden.code == 3, "\(forbidden)")

            let missing = await server.cli(key: app.publisherKey)("events", "show", "no-such-event")
            #expect(missing.code == 4, "\(missing)")
            #expect(missing.standardError.hasPrefix("error: Not found"))
            #expect(missing.standardError.contains("request id: "))

            let invalid = await server.cli(key: server.deploymentKey)(
                "apps",
                "create",
                "--name",
                "Scores",
                "--bundle-id",
                "com.example.scores",
                "--team-id",
                "X",
                "--environment",
                "sandbox"
            )
            #expect(invalid.code == 5, "\(invalid)")
            #expect(invalid.standardError.hasPrefix("error: Invalid request"))
            #expect(invalid.standardError.contains("/teamID: must be Apple's 10-character team ID"))
            #expect(invalid.standardError.contains("problem: /problems/invalid-request (HTTP 422)"))
            #expect(invalid.standardError.contains("request id: "))
        }
    }

    @Test("a server nobody listens on is 6")
    func unreachable() async throws {
        // Port 1 on loopback: nothing listens there, the connection is refused at once.
        let run = await CLI(server: "http://127.0.0.1:1", apiKey: "mq_any_key")("events", "list")
        #expect(run.code == 6, "\(run)")
        #expect(run.standardError.hasPrefix("error: cannot reach the server at http://127.0.0.1:1"))
        #expect(run.standardError.contains("the server URL came from the environment (MARQUEE_SERVER)"))
    }

    @Test("usage and configuration errors are 2: a missing option, an unknown value, no API key, a bad server URL")
    func usage() async throws {
        let cli = CLI(server: "http://127.0.0.1:1", apiKey: "mq_any_key")
        #expect(await cli("broadcast", "ars-che", "--content-state", "{}").code == 2, "--event-type is required")
        #expect(await cli("channels", "list", "--environment", "staging").code == 2)
        #expect(await cli("broadcast", "ars-che", "--event-type", "update", "--content-state", "{not json").code == 2)
        #expect(await cli("tokens", "import", "tokens.txt").code == 2, "the format cannot be told from .txt")

        let noKey = await cli.with(["MARQUEE_API_KEY": nil])("events", "list")
        #expect(noKey.code == 2)
        #expect(noKey.standardError.contains("no API key"))

        let badURL = await cli.with(["MARQUEE_SERVER": "127.0.0.1:8080"])("events", "list")
        #expect(badURL.code == 2)
        #expect(badURL.standardError.contains("is not an http:// or https:// URL"))
    }

    @Test("help lists the exit codes and exits 0")
    func help() async throws {
        let run = await CLI(server: nil)("--help")
        #expect(run.code == 0)
        for line in [
            "3  authentication", "4  not found", "5  conflict or rejected input", "6  server unreachable",
            "7  partial success", "130  interrupted",
        ] {
            #expect(run.standardOutput.contains(line), "\(line)")
        }
    }
}
