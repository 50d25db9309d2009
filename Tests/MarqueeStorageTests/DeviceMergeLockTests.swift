import Foundation
import MarqueeCore
import MarqueeTesting
import PostgresNIO
import Testing

@testable import MarqueeStorage

/// PostgreSQL only (SQLite's one writer serializes the two): a fan-out batch writes start ledger
/// entries by token row ID without a lookup, so a merge of token rows and a batch are ordered by a
/// per-app advisory lock (`PostgresStore.mergeLockKey`). Here a batch holds it and has written an
/// entry for the row about to be merged: the merge waits for the batch's commit, then moves the
/// entry to the device's row. (The other order, the merge first, is `batchAfterMerge` in the
/// contract suite: the batch re-homes its entry through `merged_token_rows`.)
@Suite("Device merges against concurrent batches")
struct DeviceMergeLockTests {
    @Test("a merge waits for a batch that holds the merge lock, then moves the start it wrote to the device's row")
    func mergeWaitsForBatch() async throws {
        try await PostgresTestCluster.withDatabase { configuration in
            try await withRunningClient(configuration) { client in
                let store = PlanProbe.store(on: client)
                let now = Date()
                let app = App(
                    name: "Scores",
                    bundleID: "com.example.scores",
                    teamID: "TEAM123456",
                    environments: [.sandbox],
                    createdAt: now
                )
                try await store.createApp(app)
                let event = try await store.createEvent(
                    Event(
                        appID: app.id,
                        externalKey: "match",
                        title: "Final",
                        attributesType: "MatchAttributes",
                        environments: [.sandbox],
                        storagePolicy: .noMessageStored,
                        plannedStart: now,
                        plannedEnd: now.addingTimeInterval(3600),
                        createdAt: now
                    )
                ).event
                _ = try await store.upsertPushToStartTokens(
                    appID: app.id,
                    [
                        DeviceContractTests.registration(token: 1, device: 1),
                        DeviceContractTests.registration(token: 2, device: nil),
                    ],
                    at: now
                )
                let token = { (index: Int) in
                    try await store.pushToStartToken(
                        appID: app.id,
                        environment: .sandbox,
                        attributesType: "MatchAttributes",
                        token: DeviceContractTests.token(index)
                    )
                }
                let device = try #require(try await token(1)).rowID
                let tokenRow = try #require(try await token(2)).rowID

                let merge = try await client.withConnection { batch in
                    // The batch: the shared lock, then its ledger entry for the token's row, not committed.
                    try await batch.query("BEGIN", logger: store.logger)
                    try await batch.query(
                        "SELECT pg_advisory_xact_lock_shared(\(PostgresStore.mergeLockKey(app.id)))",
                        logger: store.logger
                    )
                    try await batch.query(
                        """
                        INSERT INTO start_ledger (event_id, token_id, app_id, job_id, attempt, sent_at, started_at)
                        VALUES (\(event.id.uuid), \(tokenRow), \(app.id.uuid), \(UUID()), 1, \(now), \(now))
                        """,
                        logger: store.logger
                    )
                    let merge = Task {
                        try await store.upsertPushToStartTokens(
                            appID: app.id,
                            [DeviceContractTests.registration(token: 2, device: 1)],
                            at: now.addingTimeInterval(1)
                        )
                    }
                    try await waitUntil("the merge waiting for the batch's lock", timeout: .seconds(60)) {
                        let waiting = try await client.query(
                            "SELECT count(*)::bigint FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
                            logger: store.logger
                        ).collect()
                        return try waiting.first?.decode(Int64.self) == 1
                    }
                    try await batch.query("COMMIT", logger: store.logger)
                    return merge
                }
                #expect(try await merge.value == 1)
                #expect(try await token(2)?.rowID == device)
                #expect(
                    try await store.startRecords(appID: app.id, eventID: event.id, among: [device, tokenRow]).map(
                        \.tokenRowID
                    ) == [device]
                )
            }
        }
    }
}
