import Foundation
import MarqueeCore
import MarqueeTesting
import PostgresNIO

@testable import MarqueeStorage

/// What the PostgreSQL-only tests share: a store on a client's database, one on a fresh migrated
/// database whose `table` is never analyzed by autovacuum, and the generic plan PostgreSQL keeps
/// for a prepared statement.
enum PlanProbe {
    /// `body` with the client, the store and its fixture; `table` keeps no statistics but what the
    /// test gives it.
    static func withUnanalyzedStore(
        _ table: String,
        _ body: (PostgresClient, PostgresStore, StoreFixture) async throws -> Void
    ) async throws {
        try await PostgresTestCluster.withDatabase { configuration in
            try await withRunningClient(configuration) { client in
                let clock = ManualWallClock()
                let store = Self.store(on: client, clock: clock)
                let fixture = StoreFixture(store: store, clock: clock, backend: .postgres, reopen: { _ in store })
                _ = try await client.query(
                    PostgresQuery(unsafeSQL: "ALTER TABLE \(table) SET (autovacuum_enabled = false)"),
                    logger: store.logger
                ).collect()
                try await body(client, store, fixture)
            }
        }
    }

    /// A store on `client`'s database, migrated from the sources, its time `clock`'s.
    static func store(on client: PostgresClient, clock: ManualWallClock = ManualWallClock()) -> PostgresStore {
        PostgresStore(
            client: client,
            configuration: StoreConfiguration(sealer: testSealer, migrations: .sources, clock: clock)
        )
    }

    /// How many times `connection` planned each of the statements `names` it has prepared: with
    /// its generic plan, and for a call's values. A statement not prepared on it is not there.
    static func preparedPlans(
        _ names: [String],
        on connection: PostgresConnection
    ) async throws -> [String: (generic: Int64, custom: Int64)] {
        var plans: [String: (generic: Int64, custom: Int64)] = [:]
        for row in try await connection.query(
            """
            SELECT name, generic_plans, custom_plans FROM pg_prepared_statements
            WHERE name = ANY(\(names)::text[])
            """,
            logger: Logger(label: "plan-probe")
        ).collect() {
            let (name, generic, custom) = try row.decode((String, Int64, Int64).self)
            plans[name] = (generic, custom)
        }
        return plans
    }

    /// The generic plan PostgreSQL may keep for `sql` prepared on a pooled connection (after five
    /// calls, if it costs no more than those planned for their values), as `EXPLAIN EXECUTE`
    /// prints it. A generic plan does not depend on the values: NULL stands for each of its
    /// `parameters`. The connection goes back to the pool as it came.
    static func genericPlan(of sql: String, parameters: Int, on client: PostgresClient) async throws -> [String] {
        let logger = Logger(label: "plan-probe")
        return try await client.withConnection { connection in
            for statement in ["SET plan_cache_mode = force_generic_plan", "PREPARE plan_probe AS " + sql] {
                _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect()
            }
            let values = Array(repeating: "NULL", count: parameters).joined(separator: ", ")
            let plan = try await connection.query(
                PostgresQuery(unsafeSQL: "EXPLAIN EXECUTE plan_probe(\(values))"),
                logger: logger
            ).collect().map { try $0.decode(String.self) }
            for statement in ["DEALLOCATE plan_probe", "RESET plan_cache_mode"] {
                _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect()
            }
            return plan
        }
    }
}
