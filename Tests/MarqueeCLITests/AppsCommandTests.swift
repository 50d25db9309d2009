import Crypto
import Foundation
import MarqueeTesting
import Testing

/// `marquee apps` and `marquee keys`, as an operator uses them with the deployment key.
@Suite("marquee apps and keys")
struct AppsCommandTests {
    @Test(
        "an operator creates an app, installs its .p8 and makes keys; a revoked key is refused",
        arguments: TestBackend.allCases
    )
    func operatorSetsUpAnApp(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let marquee = server.cli(key: server.deploymentKey)

            let created = await marquee(
                "apps",
                "create",
                "--name",
                "Match Centre",
                "--bundle-id",
                "com.example.matchcentre",
                "--team-id",
                "ABCDE12345",
                "--environment",
                "sandbox",
                "--json"
            )
            #expect(created.code == 0, "\(created)")
            let appID = try #require(created.json["id"] as? String)
            #expect(created.json["bundleID"] as? String == "com.example.matchcentre")

            let listed = await marquee("apps", "list")
            #expect(listed.code == 0, "\(listed)")
            #expect(listed.standardOutput.contains("ID") && listed.standardOutput.contains(appID))
            #expect(listed.standardOutput.contains("com.example.matchcentre"))

            // Apple's file name gives the key ID.
            let p8 = try temporaryFile("AuthKey_DEMOKEY001.p8", contents: P256.Signing.PrivateKey().pemRepresentation)
            let installed = await marquee("apps", "signing-key", "install", appID, p8.path)
            #expect(installed.code == 0, "\(installed)")
            #expect(installed.standardOutput.contains("Installed signing key DEMOKEY001 (team ABCDE12345"))

            let updated = await marquee(
                "apps",
                "update",
                appID,
                "--name",
                "Match Centre Live",
                "--environment",
                "sandbox",
                "--environment",
                "production"
            )
            #expect(updated.code == 0, "\(updated)")
            let shown = await marquee("apps", "show", appID)
            #expect(shown.standardOutput.contains("Match Centre Live"))
            #expect(shown.standardOutput.contains("sandbox,production"))
            #expect(shown.standardOutput.contains("DEMOKEY001"))

            let publisher = await marquee(
                "keys",
                "create",
                "--app",
                appID,
                "--role",
                "publisher",
                "--label",
                "scheduler",
                "--json"
            )
            #expect(publisher.code == 0, "\(publisher)")
            let publisherKey = try #require(publisher.json["key"] as? String)
            let publisherKeyID = try #require((publisher.json["apiKey"] as? [String: Any])?["id"] as? String)
            #expect(publisherKey.hasPrefix("mq_"))

            let human = await marquee("keys", "create", "--app", appID, "--role", "app")
            #expect(human.standardOutput.contains("It is shown only now"))

            let keys = await marquee("keys", "list", "--app", appID)
            #expect(keys.code == 0, "\(keys)")
            #expect(keys.standardOutput.contains(publisherKeyID) && keys.standardOutput.contains("scheduler"))
            #expect(!keys.standardOutput.contains(publisherKey), "a listing never shows a key's secret")

            // The publisher key works until it is revoked; then the server answers 401: exit 3.
            let asPublisher = server.cli(key: publisherKey)
            #expect(await asPublisher("events", "list").code == 0)
            #expect(await marquee("keys", "revoke", "--app", appID, publisherKeyID).code == 0)
            let refused = await asPublisher("events", "list")
            #expect(refused.code == 3, "\(refused)")
            #expect(!refused.standardError.contains(publisherKey), "the key never appears in an error")
            #expect(refused.standardError.contains("the API key came from the environment (MARQUEE_API_KEY)"))
        }
    }
}
