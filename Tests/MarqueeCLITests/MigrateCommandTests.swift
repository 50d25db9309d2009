import Foundation
import Testing

/// `marquee migrate` beside a PostgreSQL that is not up yet: a deployment's migrate step may start
/// before its database does.
@Suite("marquee migrate waits for PostgreSQL")
struct MigrateCommandTests {
    /// Port 1 on loopback: nothing listens there, the connection is refused at once.
    static let unreachable = "postgres://producer:hunter2-secret@127.0.0.1:1/marquee"

    @Test(
        """
        a PostgreSQL that stays unreachable is tried again for --wait seconds, then refused with exit 1, never \
        showing the password
        """
    )
    func waitsThenRefuses() async throws {
        let started = ContinuousClock.now
        let run = await CLI(server: nil)("migrate", "--database-url", Self.unreachable, "--wait", "2")
        #expect(run.code == 1, "\(run)")
        #expect(ContinuousClock.now - started >= .seconds(1), "it gave up without waiting")
        #expect(run.standardError.contains("cannot use PostgreSQL at 127.0.0.1:1/marquee as producer:"), "\(run)")
        #expect(!run.standardError.contains("hunter2-secret"))
    }

    @Test("--wait 0 refuses at the first failure; a negative wait is a usage error")
    func noWait() async throws {
        let run = await CLI(server: nil)("migrate", "--database-url", Self.unreachable, "--wait", "0")
        #expect(run.code == 1, "\(run)")
        #expect(run.standardError.contains("cannot use PostgreSQL at 127.0.0.1:1/marquee as producer:"), "\(run)")

        let negative = await CLI(server: nil)("migrate", "--database-url", Self.unreachable, "--wait=-1")
        #expect(negative.code == 2, "\(negative)")
        #expect(negative.standardError.contains("--wait takes seconds"), "\(negative)")
    }
}
