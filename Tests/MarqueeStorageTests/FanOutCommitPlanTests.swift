import Foundation
import MarqueeCore
import MarqueeTesting
import PostgresNIO
import Testing

@testable import MarqueeStorage

/// PostgreSQL only: what a fan-out runs at every batch commit and every reservation is prepared
/// (`PreparedJobStatements.swift`) and settles on its generic plan, so PostgreSQL neither parses
/// nor plans it again at each of the thousands of calls a large start makes. A statement whose
/// generic plan cost more than those for its values would be planned at every call still; the
/// counts PostgreSQL keeps per prepared statement say which it did.
@Suite("Fan-out commit plans")
struct FanOutCommitPlanTests {
    @Test(
        "a start's batch commits and reservations keep their generic plans after five calls, and commit what they did"
    )
    func commitsKeepTheGenericPlans() async throws {
        try await PostgresTestCluster.withDatabase { configuration in
            // One connection: every statement below is prepared on it, and `pg_prepared_statements`
            // shows that session's.
            var configuration = configuration
            configuration.options.maximumConnections = 1
            try await withRunningClient(configuration) { client in
                let clock = ManualWallClock()
                let store = PlanProbe.store(on: client, clock: clock)
                let fixture = StoreFixture(store: store, clock: clock, backend: .postgres, reopen: { _ in store })
                // Batches of twelve, one token of each unregistered and the rest started: more than
                // the ten elements PostgreSQL assumes of an array parameter in a generic plan, as a
                // fan-out's batches (500) are. A batch of fewer is planned for its values, as it
                // was unprepared.
                let calls = 8
                let size = 12
                let scene = try await DeliveryContractTests.scene(fixture, count: calls * size)
                for call in 0..<calls {
                    let tokens = scene.tokens[(call * size)..<((call + 1) * size)]
                    try await store.reserveJobTokens(
                        id: scene.job.id,
                        owner: "worker",
                        through: tokens.last?.rowID,
                        at: fixture.now
                    )
                    try await store.commitDeliveryBatch(
                        DeliveryContractTests.batch(scene, tokens, at: fixture.now),
                        at: fixture.now
                    )
                }

                let names = [
                    LeaseHoldShape.name, ProgressAdditionShape.name, ReservationShape.name, EventLiveShape.name,
                    MergeLockSharedShape.name, MergedTokenRowsShape.name,
                ]
                // The pool's one connection.
                let plans = try await client.withConnection { try await PlanProbe.preparedPlans(names, on: $0) }
                #expect(Set(plans.keys) == Set(names))
                for (name, counts) in plans {
                    #expect(counts.custom <= 5, "\(name) planned \(counts.custom) calls for their values")
                    #expect(counts.generic + counts.custom == Int64(calls), "\(name)")
                }

                // The prepared statements wrote what the unprepared ones did.
                let job = try #require(try await store.job(appID: scene.app.id, id: scene.job.id))
                #expect(job.progress.attempted == Int64(calls * size))
                #expect(job.progress.succeeded == Int64(calls * (size - 1)))
                #expect(job.checkpoint == scene.tokens.last.map { String($0.rowID) })
                let event = try #require(try await store.event(appID: scene.app.id, id: scene.event.id))
                #expect(event.state == .live)
                let starts = try await store.startRecords(
                    appID: scene.app.id,
                    eventID: scene.event.id,
                    among: scene.tokens.map(\.rowID)
                )
                #expect(starts.count == calls * (size - 1))
            }
        }
    }
}
