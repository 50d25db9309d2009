import Logging
import PostgresNIO
import Testing
import _ConnectionPoolModule

@testable import MarqueeStorage

/// Which failures a replica's start waits out, and that it stops waiting on the others at once.
@Suite("PostgreSQL at start")
struct PostgresStartupTests {
    let target = try! PostgresConnectionURL("postgres://marquee:secret@127.0.0.1:1/marquee")
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test("the pool's open circuit breaker is waited out; a pool shut down or a cancelled request is not")
    func poolErrors() {
        #expect(PostgresConnectionURL.isTransient(ConnectionPoolError.connectionCreationCircuitBreakerTripped))
        #expect(!PostgresConnectionURL.isTransient(ConnectionPoolError.poolShutdown))
        #expect(!PostgresConnectionURL.isTransient(ConnectionPoolError.requestCancelled))
        #expect(!PostgresConnectionURL.isTransient(CancellationError()))
    }

    @Test("a transient failure is tried again until the operation succeeds")
    func retriesUntilSuccess() async throws {
        var attempts = 0
        let answer = try await target.retryingWhileUnavailable(patience: .seconds(10), logger: logger) {
            attempts += 1
            if attempts < 3 { throw ConnectionPoolError.connectionCreationCircuitBreakerTripped }
            return "migrated"
        }
        #expect(answer == "migrated")
        #expect(attempts == 3)
    }

    @Test("a failure waiting cannot mend is thrown at once")
    func permanentFailure() async throws {
        var attempts = 0
        await #expect(throws: ConnectionPoolError.poolShutdown) {
            try await target.retryingWhileUnavailable(patience: .seconds(10), logger: logger) {
                attempts += 1
                throw ConnectionPoolError.poolShutdown
            }
        }
        #expect(attempts == 1)
    }
}
