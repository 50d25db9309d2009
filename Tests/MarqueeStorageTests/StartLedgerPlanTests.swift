import Foundation
import MarqueeCore
import MarqueeTesting
import PostgresNIO
import Testing

@testable import MarqueeStorage

/// PostgreSQL only: the start ledger has no index on its tokens (migration 0021), so the statements
/// that find a token's entries, its deletion and a device's rotation onto another token's row (its
/// ledger entries and the starts waiting for it), must
/// reach them through the app's events and the primary key. Read whole, the ledger of a season is
/// hundreds of millions of entries. The plans are read, not timed, on a ledger of 40,000 entries
/// over four events of the app and one of another app.
@Suite("Start ledger plans")
struct StartLedgerPlanTests {
    @Test(
        "a token's deletion, and a rotation onto another token's row with the starts waiting for it, read the ledger by its primary key"
    )
    func byPrimaryKey() async throws {
        try await PlanProbe.withUnanalyzedStore("start_ledger") { client, store, fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            var events = [try await fixture.makeEvent(for: other)]
            for number in 1...4 { events.append(try await fixture.makeEvent(for: app, key: "match-\(number)")) }
            for event in events {
                _ = try await client.query(
                    """
                    INSERT INTO start_ledger (event_id, token_id, app_id, started_at)
                    SELECT \(event.id.uuid), token_id, \(event.appID.uuid), now()
                    FROM generate_series(1, 8000) AS token_id
                    """,
                    logger: store.logger
                ).collect()
            }
            _ = try await client.query("ANALYZE start_ledger", logger: store.logger).collect()

            let statements =
                [PostgresStore.deleteLedgerEntries(appID: app.id, tokenRow: 7)]
                + PostgresStore.ledgerMoves(appID: app.id, from: 7, into: 9)
            // A waiting start moves with the device only for events the device was not started for.
            let pendingStarts = PostgresStore.pendingStartMoves(appID: app.id, from: 7, into: 9)
            for statement in statements + [pendingStarts] {
                let plan = try await client.query(
                    PostgresQuery(unsafeSQL: "EXPLAIN " + statement.sql, binds: statement.binds),
                    logger: store.logger
                ).collect().map { try $0.decode(String.self) }
                let text = plan.joined(separator: "\n")
                #expect(!plan.contains { $0.contains("Seq Scan on start_ledger") }, "\(text)")
                #expect(plan.contains { $0.contains("using start_ledger_pkey") }, "\(text)")
            }

            // And they do what they say: token 7's entries of the app's events go, the other app's stay.
            for statement in statements.dropFirst() + statements.prefix(1) {
                _ = try await client.query(statement, logger: store.logger).collect()
            }
            let left = try await client.query(
                """
                SELECT count(*) FILTER (WHERE token_id = 7), count(*) FILTER (WHERE token_id = 9)
                FROM start_ledger WHERE app_id = \(app.id.uuid)
                """,
                logger: store.logger
            ).collect().first?.decode((Int, Int).self)
            #expect(left?.0 == 0)
            #expect(left?.1 == 4)
            let others = try await client.query(
                "SELECT count(*) FROM start_ledger WHERE app_id = \(other.id.uuid) AND token_id = 7",
                logger: store.logger
            ).collect().first?.decode(Int.self)
            #expect(others == 1)
        }
    }
}
