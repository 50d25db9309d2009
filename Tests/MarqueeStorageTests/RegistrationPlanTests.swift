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
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            _ = try await store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now)
            try await store.recordLateJoinOffer(PendingStartContractTests.offer(event, at: fixture.now))
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
}
