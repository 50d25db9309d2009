import Foundation
import MarqueeStorage
import MarqueeTesting
import Testing

/// PostgreSQL with password authentication (SCRAM-SHA-256), as production runs it. The test
/// cluster trusts its main user on loopback, so that the suite's hundreds of connections cost no
/// SCRAM rounds; these tests log in as the cluster's other user, which must give its password.
@Suite("PostgreSQL with a password")
struct PostgresPasswordTests {
    @Test("a replica that logs in with a password starts on its database and serves")
    func serves() async throws {
        try await TestServer.withDatabase(.postgres) { database in
            let url = try #require(
                database.passwordURL,
                "scripts/with-postgres names a user that logs in with a password"
            )
            try await TestServer.run(on: database, settings: ["database.url": url]) { server in
                let app = try await server.makeApp()
                let event = try await server.putEvent(app, key: "match")
                #expect(event.status == 201, "\(event.text)")
            }
        }
    }

    @Test("a wrong password stops the start at once with exit 1, naming the user, never the password")
    func wrongPassword() async throws {
        let cluster = try PostgresTestCluster.fromEnvironment()
        let user = try #require(cluster.scramUser)
        let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-password-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        let (status, log) = try await ServeProcess.failingStart(settings: [
            "database.url": "postgres://\(user):not-the-password-hunter3@\(cluster.host):\(cluster.port)/"
                + "\(cluster.adminDatabase)?sslmode=disable",
            "data.dir": dataDirectory,
            "secrets.masterKeys": "test-1:\(MasterKey.generateBase64())",
            // Waiting cannot mend a refusal: a start that waited would outlast failingStart's minute.
            "database.startupWaitSeconds": "3600",
        ])
        #expect(status == 1, "\(log)")
        #expect(
            log.contains(
                "cannot use PostgreSQL at \(cluster.host):\(cluster.port)/\(cluster.adminDatabase) as \(user):"
            ),
            "\(log)"
        )
        #expect(log.contains("28P01"), "the server's reason (invalid_password): \(log)")
        #expect(!log.contains("not-the-password-hunter3"))
    }
}
