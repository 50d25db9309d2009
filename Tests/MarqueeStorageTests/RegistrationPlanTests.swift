import Foundation
import MarqueeCore
import MarqueeTesting
import PostgresNIO
import Testing

@testable import MarqueeStorage

/// PostgreSQL only: a registration's statement reaches the tokens by their unique key or by the rows
/// it wrote, whatever PostgreSQL knows of the table. Right after a bulk import, before autoanalyze
/// has run, a plan that leaned on statistics scanned the app's tokens on every registration (25
/// requests/s instead of 650 in `Benchmarks/run-api.sh`). Here the table holds 30,000 tokens that
/// were never analyzed, and the statement's plan is read, not timed.
@Suite("Registration plans")
struct RegistrationPlanTests {
    @Test(
        "after a bulk import with no statistics, a registration of 1 or 1,000 tokens scans no token table",
        arguments: [1, 1_000]
    )
    func noScanWithoutStatistics(batchSize: Int) async throws {
        try await PlanProbe.withUnanalyzedStore("push_to_start_tokens") { client, store, fixture in
            let app = try await Self.appTakingLateJoiners(store, fixture)
            for part in 0..<3 {
                let imported = (part * 10_000..<(part + 1) * 10_000).map { TokenContractTests.registration($0) }
                _ = try await store.upsertPushToStartTokens(appID: app.id, imported, at: fixture.now)
            }
            let analyzed = try await client.query(
                """
                SELECT count(*) FROM pg_stat_user_tables
                WHERE relname = 'push_to_start_tokens'
                  AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)
                """,
                logger: store.logger
            ).collect().first?.decode(Int.self)
            #expect(analyzed == 0)

            let registrations = (50_000..<(50_000 + batchSize)).map { TokenContractTests.registration($0) }
            let statement = PostgresStore.registration(
                appID: app.id,
                registrations[...],
                at: fixture.now,
                options: [.queueLateJoiners, .refuseRotations],
                returningTokens: batchSize == 1
            )
            // The plan for these values, and the generic plan a pooled connection may keep for the
            // prepared statement (`PreparedQueryShape`).
            let custom = try await client.query(
                PostgresQuery(unsafeSQL: "EXPLAIN " + statement.sql, binds: statement.binds),
                logger: store.logger
            ).collect().map { try $0.decode(String.self) }
            let generic = try await PlanProbe.genericPlan(
                of: PreparedRegistration.sql,
                parameters: statement.binds.count,
                on: client
            )
            for plan in [custom, generic] {
                let scans = plan.filter {
                    $0.contains("on push_to_start_tokens") || $0.contains("on start_ledger")
                }.filter { $0.contains("Seq Scan") || $0.contains("Bitmap Heap Scan") }
                #expect(scans.isEmpty, "\(plan.joined(separator: "\n"))")
            }
            #expect(generic != custom, "the probe's plan is the generic one, not one for the values")

            // And it does what it says on this table: written and queued, one round trip.
            let outcome = try await store.registerPushToStartTokens(
                appID: app.id,
                registrations,
                at: fixture.now,
                returningTokens: false
            )
            #expect(outcome == TokenRegistrationOutcome(written: batchSize, lateJoinersQueued: batchSize))
        }
    }

    /// PostgreSQL plans a prepared statement for its values five times, then keeps its generic plan
    /// if that costs no more than those did. Planning the registration cost four to six times what
    /// running it did, so the statement must settle on its generic plan whatever a connection ran
    /// first: imports (as after a bulk load), or single registrations and the small batches that
    /// `RegistrationCoalescer` makes of them under load (as after a restart at kick-off).
    @Test(
        "a registration keeps the generic plan after five calls, whatever the connection ran first",
        arguments: [false, true]
    )
    func registrationKeepsTheGenericPlan(importsFirst: Bool) async throws {
        try await PlanProbe.withUnanalyzedStore("push_to_start_tokens") { client, store, fixture in
            let app = try await Self.appTakingLateJoiners(store, fixture)
            let calls = 20
            let counts = try await client.withConnection { connection in
                var next = 0
                func register(_ count: Int, options: PostgresStore.RegistrationOptions) async throws {
                    let chunk = (next..<next + count).map { TokenContractTests.registration($0) }
                    next += count
                    let statement = PostgresStore.registration(
                        appID: app.id,
                        chunk[...],
                        at: fixture.now,
                        options: options,
                        returningTokens: count < 10
                    )
                    for try await _ in try await connection.execute(
                        PreparedRegistration(statement),
                        logger: store.logger
                    ) {}
                }
                if importsFirst {
                    for _ in 0..<5 { try await register(1_000, options: [.queueLateJoiners]) }
                }
                for call in 0..<calls {
                    // As the API's path (one registration, or a few coalesced) and a rotation's
                    // transaction call it.
                    let options: PostgresStore.RegistrationOptions =
                        call.isMultiple(of: 4) ? [.queueLateJoiners] : [.queueLateJoiners, .refuseRotations]
                    try await register(call.isMultiple(of: 3) ? 1 + call % 4 : 1, options: options)
                }
                return try await connection.query(
                    """
                    SELECT generic_plans, custom_plans FROM pg_prepared_statements
                    WHERE name = \(RegistrationShape.name)
                    """,
                    logger: store.logger
                ).collect().first?.decode((Int64, Int64).self)
            }
            let (generic, custom) = try #require(counts)
            #expect(custom <= 5)
            #expect(generic + custom == Int64(calls + (importsFirst ? 5 : 0)))
        }
    }

    /// A rotation's transaction (the app held, the rotations found, the rows locked and moved) runs
    /// on prepared statements that settle on their generic plans: a tenth of a match day's
    /// registrations rotate, and planning each of their statements at every call cost more than
    /// running them.
    @Test("a rotation's statements keep their generic plans after five calls")
    func rotationKeepsTheGenericPlans() async throws {
        try await PlanProbe.withUnanalyzedStore("push_to_start_tokens") { client, store, fixture in
            let app = try await fixture.makeApp()
            let calls = 20
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                (0..<calls).map { TokenContractTests.registration($0) },
                at: fixture.now
            )
            let plans = try await client.withConnection { connection in
                for call in 0..<calls {
                    // Device `call` comes back with a token of its own that no row has yet.
                    var rotated = TokenContractTests.registration(call)
                    rotated.token = String(format: "%064x", 10_000 + call)
                    _ = try await connection.query("BEGIN", logger: store.logger).collect()
                    _ = try await connection.rows(
                        PreparedQuery<AppHoldShape>(PostgresStore.holdApp(app.id)),
                        logger: store.logger
                    )
                    try await PostgresStore.rotateDevices(
                        appID: app.id,
                        [rotated],
                        at: fixture.now,
                        on: connection,
                        logger: store.logger
                    )
                    _ = try await connection.query("COMMIT", logger: store.logger).collect()
                }
                return try await PlanProbe.preparedPlans(
                    [AppHoldShape.name, RotationsShape.name, TokenRowLockShape.name, DeviceRowMoveShape.name],
                    on: connection
                )
            }
            #expect(plans.count == 4)
            for (name, counts) in plans {
                #expect(counts.custom <= 5, "\(name) planned \(counts.custom) calls for their values")
                #expect(counts.generic + counts.custom >= Int64(calls), "\(name)")
            }
            // Each device's row now carries its new token.
            let moved = try await store.pushToStartToken(
                appID: app.id,
                environment: .sandbox,
                attributesType: "MatchAttributes",
                token: String(format: "%064x", 10_000 + calls - 1)
            )
            #expect(moved?.deviceID == "device-\(calls - 1)")
        }
    }

    /// An app with a live event that offers itself to late joiners: the registration statement's
    /// whole path, its queue of pending starts included.
    private static func appTakingLateJoiners(_ store: PostgresStore, _ fixture: StoreFixture) async throws -> App {
        let app = try await fixture.makeApp()
        let event = try await fixture.makeEvent(for: app)
        _ = try await store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now)
        try await store.recordLateJoinOffer(PendingStartContractTests.offer(event, at: fixture.now))
        return app
    }
}
