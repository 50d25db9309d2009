import Foundation
import MarqueeStorage
import MarqueeTesting
import Testing

/// What an operator sees when `marquee serve` cannot start on the database it was given.
@Suite("marquee serve refuses to start on a database it cannot use")
struct ServeStartupTests {
    @Test("an unreachable PostgreSQL stops the start with exit 1, naming where and why, never the password")
    func unreachablePostgres() async throws {
        // Not waiting for it to come up: the test is about the message.
        let (status, log) = try await Self.startOnUnreachablePostgres(waitingSeconds: 0)
        #expect(status == 1)
        #expect(log.contains("cannot use PostgreSQL at 127.0.0.1:1/marquee as producer:"), "\(log)")
        #expect(log.contains("connectionError") || log.contains("Connection refused"), "\(log)")
        #expect(!log.contains("hunter2-secret"))
    }

    @Test("a PostgreSQL that stays unreachable is waited for with retries, then the start stops with exit 1")
    func waitsForPostgres() async throws {
        let started = ContinuousClock.now
        let (status, log) = try await Self.startOnUnreachablePostgres(waitingSeconds: 2)
        #expect(status == 1)
        #expect(ContinuousClock.now - started >= .seconds(1))
        #expect(log.contains("PostgreSQL is not reachable yet; trying again"), "\(log)")
        #expect(log.contains("cannot use PostgreSQL at 127.0.0.1:1/marquee as producer:"), "\(log)")
        #expect(!log.contains("hunter2-secret"))
    }

    /// `marquee serve` on a PostgreSQL URL whose port nothing listens on (port 1 on loopback: the
    /// connection is refused at once), with a password the log must never show.
    static func startOnUnreachablePostgres(waitingSeconds: Int) async throws -> (status: Int32, log: String) {
        let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-startup-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        return try await ServeProcess.failingStart(settings: [
            "database.url": "postgres://producer:hunter2-secret@127.0.0.1:1/marquee",
            "data.dir": dataDirectory,
            "secrets.masterKeys": "test-1:\(MasterKey.generateBase64())",
            "database.startupWaitSeconds": "\(waitingSeconds)",
        ])
    }
}
