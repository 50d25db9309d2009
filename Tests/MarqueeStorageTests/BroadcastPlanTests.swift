import Foundation
import MarqueeCore
import MarqueeTesting
import PostgresNIO
import Testing

@testable import MarqueeStorage

/// PostgreSQL only: the statement a broadcast runs before its send is prepared, so each connection
/// keeps one generic plan for it. That plan must still count the channel's priority-10 broadcasts
/// through the partial index `broadcast_log_budget`, whose predicate a generic plan can prove only
/// from literals: with the priority bound as a parameter it read every line of the channel's log.
/// The log here holds 20,000 lines that were never analyzed; the plan is read, not timed.
@Suite("Broadcast plans")
struct BroadcastPlanTests {
    @Test("the prepared begin-broadcast statement counts the budget through its partial index and counts it right")
    func budgetThroughItsIndex() async throws {
        try await PlanProbe.withUnanalyzedStore("broadcast_log") { client, store, fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            _ = try await store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now)
            let channel = try await fixture.makeActiveChannel(for: event)
            _ = try await client.query(
                """
                INSERT INTO broadcast_log (app_id, channel_id, apns_request_id, priority, aps_timestamp, status,
                                           latency_us, sent_at, event, downgraded)
                SELECT \(app.id.uuid), \(channel.id.uuid), gen_random_uuid(), 5, n, 200, 1, \(fixture.now), 'update',
                       false
                FROM generate_series(1, 20000) AS n
                """,
                logger: store.logger
            ).collect()
            for offset in [-4000.0, -60, -10] {
                try await store.appendBroadcastLog(
                    BroadcastLogEntry(
                        appID: app.id,
                        channelID: channel.id,
                        apnsRequestID: UUID.random(),
                        apnsUniqueID: nil,
                        priority: .immediate,
                        timestamp: 1,
                        status: 200,
                        reason: nil,
                        latency: .microseconds(1),
                        sentAt: fixture.now.addingTimeInterval(offset)
                    )
                )
            }

            let parameters = PostgresStore.beginBroadcast(
                appID: app.id,
                externalKey: event.externalKey,
                environments: [.sandbox],
                now: 1,
                budgetSince: fixture.now
            ).binds.count
            let generic = try await PlanProbe.genericPlan(
                of: BeginBroadcastShape.sql,
                parameters: parameters,
                on: client
            )
            let onLog = generic.filter { $0.contains("on broadcast_log") }
            #expect(onLog.contains { $0.contains("broadcast_log_budget") }, "\(generic.joined(separator: "\n"))")
            #expect(!onLog.contains { $0.contains("Seq Scan") }, "\(generic.joined(separator: "\n"))")

            // And through the pool's prepared statement: the two lines within the hour.
            let target = try await store.beginBroadcast(
                appID: app.id,
                externalKey: event.externalKey,
                environments: [.sandbox],
                now: 1,
                budgetSince: fixture.now.addingTimeInterval(-3600)
            )
            #expect(target?.taken[.sandbox]?.immediateSent == 2)
        }
    }
}
