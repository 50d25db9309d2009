import Foundation
import MarqueeServer
import MarqueeTesting
import Testing

@testable import MarqueeCLI

/// Profiles: saved servers and keys, and the order in which flags, the environment and the
/// profile file are read.
@Suite("marquee profiles")
struct ProfileTests {
    @Test(
        "profile set writes the file readable by its owner only; commands then need no flags; list never shows keys",
        arguments: [TestBackend.sqlite]
    )
    func savedProfile(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let cli = CLI(server: nil)
            let saved = await cli(
                "profile",
                "set",
                "local",
                "--server",
                server.started.baseURL,
                "--api-key",
                app.publisherKey
            )
            #expect(saved.code == 0, "\(saved)")
            #expect(saved.standardOutput.contains("Saved profile local (default)"))
            let attributes = try FileManager.default.attributesOfItem(atPath: cli.profileFile)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

            #expect(await cli("events", "list").code == 0, "the default profile gives the server and the key")
            let listed = await cli("profile", "list")
            #expect(listed.standardOutput.contains("local") && listed.standardOutput.contains(server.started.baseURL))
            #expect(!listed.standardOutput.contains(app.publisherKey))

            #expect(
                await cli("events", "list", "--profile", "prod").code == 2,
                "an unknown profile is a configuration error"
            )
        }
    }

    @Test(
        """
        a flag beats everything; the environment beats the default profile; a profile named with --profile beats \
        the environment
        """
    )
    func precedence() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-profiles-\(UUID().uuidString.prefix(8))"
        )
        let path = folder.appendingPathComponent("profiles.json").path
        let file = ProfileFile(
            defaultProfile: "local",
            profiles: [
                "local": .init(server: "http://127.0.0.1:8080", apiKey: "mq_local_key"),
                "prod": .init(server: "https://marquee.example.com", apiKey: "mq_prod_key"),
            ]
        )
        try file.write(to: path)
        let environment = [
            "MARQUEE_CONFIG": path, "MARQUEE_SERVER": "http://10.0.0.1:8080", "MARQUEE_API_KEY": "mq_env_key",
        ]

        let fromEnvironment = try Connection.resolve(server: nil, apiKey: nil, profile: nil, environment: environment)
        #expect(fromEnvironment.serverURL.absoluteString == "http://10.0.0.1:8080")
        #expect(fromEnvironment.apiKey == "mq_env_key")

        let fromDefault = try Connection.resolve(
            server: nil,
            apiKey: nil,
            profile: nil,
            environment: ["MARQUEE_CONFIG": path]
        )
        #expect(fromDefault.apiKey == "mq_local_key")
        #expect(fromDefault.apiKeySource == .profile("local"))

        let named = try Connection.resolve(server: nil, apiKey: nil, profile: "prod", environment: environment)
        #expect(named.serverURL.absoluteString == "https://marquee.example.com")
        #expect(named.apiKey == "mq_prod_key", "never the key exported for another server")

        let flags = try Connection.resolve(
            server: "http://127.0.0.1:9000/",
            apiKey: "mq_flag_key",
            profile: "prod",
            environment: environment
        )
        #expect(flags.serverURL.absoluteString == "http://127.0.0.1:9000")
        #expect(flags.apiKey == "mq_flag_key")

        let fallback = try Connection.resolve(
            server: nil,
            apiKey: nil,
            profile: nil,
            environment: ["MARQUEE_CONFIG": folder.appendingPathComponent("none.json").path]
        )
        #expect(fallback.serverURL.absoluteString == "http://127.0.0.1:8080")
        #expect(fallback.apiKey == nil)
    }
}
