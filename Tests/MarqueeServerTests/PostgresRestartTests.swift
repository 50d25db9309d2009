import Foundation
import Logging
import MarqueeCore
import MarqueeServer
import MarqueeStorage
import MarqueeTesting
import PostgresNIO
import Synchronization
import Testing

/// PostgreSQL restarting in immediate mode while a replica's store is busy: the fault `scripts/chaos`
/// injects, here on a cluster of the test's own with the pool configured as `marquee serve`
/// configures it.
///
/// Two defects of PostgresNIO 1.33 stood behind a 50,000-device chaos run that never ended: its pool
/// stops the process on a precondition when it keeps a minimum of connections through such a restart,
/// and some queries in flight when PostgreSQL cut their connections never answer. So the pool keeps no
/// minimum, and each store call has a deadline (`database.callTimeoutSeconds`).
@Suite(.serialized) struct PostgresRestartTests {
    @Test func everyCallerOfTheStoreIsAnsweredAgainAfterPostgreSQLRestartsInImmediateModeUnderLoad() async throws {
        let cluster = try await PrivatePostgresCluster.start()
        do {
            try await hammerThroughRestart(of: cluster)
        } catch {
            await cluster.remove()
            throw error
        }
        await cluster.remove()
    }

    private func hammerThroughRestart(of cluster: PrivatePostgresCluster) async throws {
        let configuration = try ServerConfiguration.reading(
            [
                "database.url": cluster.url,
                "database.maxConnections": "20",
                "secrets.masterKeys": "k1:" + Data(repeating: 7, count: 32).base64EncodedString(),
            ],
            environment: false
        )
        let client = PostgresClient(
            configuration: configuration.postgresClientConfiguration(for: try PostgresConnectionURL(cluster.url)),
            backgroundLogger: Logger(label: "test.pool")
        )
        // A short deadline: a call it cuts off on a busy machine is only tried again.
        let store = PostgresStore(
            client: client,
            configuration: StoreConfiguration(
                sealer: nil,
                migrations: MigrationDirectory(root: URL(fileURLWithPath: SourceTree.sqlDirectory, isDirectory: true))
            ),
            callTimeout: .seconds(2)
        )
        let callers = 20
        let board = CallerBoard(callers: callers)

        let pool = Task { await client.run() }
        defer { pool.cancel() }
        try await store.migrate()
        // Unstructured, and not waited for at the end: a caller whose call never answers (the
        // defect) must fail the test, not hang it.
        let calls = (0..<callers).map { caller in
            Task {
                while !Task.isCancelled {
                    do {
                        let begun = ContinuousClock.now
                        // A transaction and a plain query, as a job run's commits and reads are.
                        _ = try await store.leaseJobs(
                            owner: "caller-\(caller)",
                            kinds: nil,
                            now: Date(),
                            leaseDuration: .seconds(30),
                            limit: 1
                        )
                        _ = try await store.apps()
                        board.answered(caller, callBegun: begun)
                    } catch {
                        board.failed(caller, error)
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                }
            }
        }
        defer { calls.forEach { $0.cancel() } }
        try await waitUntil("every caller was answered before the restart") { board.everyCallerAnswered(since: nil) }

        try await cluster.restartImmediately(downFor: .seconds(2))
        let restarted = ContinuousClock.now

        try await waitUntil(
            """
            every caller was answered by a call begun after PostgreSQL's restart; not: \
            \(board.unanswered(since: restarted))
            """,
            timeout: .seconds(40)
        ) {
            board.everyCallerAnswered(since: restarted)
        }
    }
}

/// What each caller last heard from the store.
private final class CallerBoard: Sendable {
    private struct State {
        var lastAnsweredCallBegun: [ContinuousClock.Instant?]
        var lastError: [String]
    }

    private let state: Mutex<State>

    init(callers: Int) {
        state = Mutex(
            State(
                lastAnsweredCallBegun: Array(repeating: nil, count: callers),
                lastError: Array(repeating: "", count: callers)
            )
        )
    }

    func answered(_ caller: Int, callBegun: ContinuousClock.Instant) {
        state.withLock { $0.lastAnsweredCallBegun[caller] = callBegun }
    }

    func failed(_ caller: Int, _ error: any Error) {
        state.withLock { $0.lastError[caller] = String(reflecting: error) }
    }

    /// Whether each caller has had an answer to a call begun after `since` (any call, when nil).
    func everyCallerAnswered(since: ContinuousClock.Instant?) -> Bool {
        state.withLock { state in
            state.lastAnsweredCallBegun.allSatisfy { begun in
                guard let begun else { return false }
                return since.map { begun > $0 } ?? true
            }
        }
    }

    /// The callers not answered since `since`, with the last error each heard.
    func unanswered(since: ContinuousClock.Instant) -> String {
        state.withLock { state in
            let waiting = state.lastAnsweredCallBegun.indices.filter { caller in
                state.lastAnsweredCallBegun[caller].map { $0 <= since } ?? true
            }
            return waiting.map {
                """
                caller \($0) (last error: \
                \(state.lastError[$0].isEmpty ? "none" : String(state.lastError[$0].prefix(200))))
                """
            }
            .joined(separator: "; ")
        }
    }
}
