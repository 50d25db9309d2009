import Foundation
import MarqueeCore
import MarqueeTesting
import PostgresNIO
import Testing

@testable import MarqueeStorage

/// PostgreSQL only: a funnel's statements (and a start's audience extent, through the same
/// `PostgresStore.wholeAudienceRows`) are planned without parallel workers and run without JIT
/// compilation, whatever the database would choose for them. With the start ledger at 600,000
/// entries PostgreSQL counted a 100,000-device event's funnel with a parallel scan of the whole
/// ledger, three processes' CPU growing with every start of the day, each minute on every replica
/// (the match-day soak); alone it reads the event's own entries. A start's audience extent spent
/// 640 of its 704 ms compiling. Here the database's settings make every read a parallel scan and
/// every statement worth compiling, and the plan is read, not timed.
@Suite("Funnel plans")
struct FunnelPlanTests {
    @Test("a funnel's statement plans no parallel workers and no JIT compilation where the database would plan them")
    func noParallelWorkers() async throws {
        try await PostgresTestCluster.withDatabase { configuration in
            // Set before the store's client connects, so that every connection it opens has them.
            try await withRunningClient(configuration) { admin in
                // On tables this small PostgreSQL reads by index; without index scans, every read is
                // a scan of its table, which these costs make parallel.
                let settings = [
                    "parallel_setup_cost = 0", "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
                    "enable_indexscan = off", "enable_indexonlyscan = off", "enable_bitmapscan = off",
                    "jit = on", "jit_above_cost = 0",
                ]
                for setting in settings {
                    _ = try await admin.query(
                        PostgresQuery(
                            unsafeSQL: """
                                DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET \(setting)', current_database()); END $$
                                """
                        ),
                        logger: Logger(label: "funnel-plan")
                    ).collect()
                }
            }
            try await withRunningClient(configuration) { client in
                let store = PlanProbe.store(on: client)
                let explain = PostgresQuery(
                    unsafeSQL: "EXPLAIN " + PresenceQueries.funnel { "$\($0)" },
                    binds: PostgresStore.eventBinds(appID: AppID(), eventID: EventID())
                )

                let asTheDatabaseWould = try await client.query(explain, logger: store.logger).collect()
                    .map { try $0.decode(String.self) }
                #expect(
                    asTheDatabaseWould.contains { $0.contains("Workers Planned") },
                    "the database's own plan is parallel: \(asTheDatabaseWould.joined(separator: "\n"))"
                )

                // A server built without LLVM plans no JIT compilation in the first place.
                let jitAvailable =
                    try await client.query("SELECT pg_jit_available()", logger: store.logger)
                    .collect().first?.decode(Bool.self) ?? false
                if jitAvailable {
                    #expect(
                        asTheDatabaseWould.contains { $0.hasPrefix("JIT:") },
                        "the database's own plan compiles: \(asTheDatabaseWould.joined(separator: "\n"))"
                    )
                }

                let asTheStorePlansIt = try await store.wholeAudienceRows(explain).map { try $0.decode(String.self) }
                #expect(
                    !asTheStorePlansIt.contains { $0.contains("Workers") || $0.hasPrefix("JIT:") },
                    "\(asTheStorePlansIt.joined(separator: "\n"))"
                )
            }
        }
    }
}
