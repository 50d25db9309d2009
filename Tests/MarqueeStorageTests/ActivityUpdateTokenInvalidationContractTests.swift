import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

@Suite("An activity's update token answered 410")
struct ActivityUpdateTokenInvalidationContractTests {
    @Test(
        """
        a 410 ends the activity only for the token it holds now, dated at or after that token's receipt; \
        a late 410 for the token the device replaced, or one dated before the new token came, leaves it active
        """,
        arguments: Backend.allCases
    )
    func timestampRule(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let activity = Activity(appID: app.id, eventID: event.id, environment: .sandbox, createdAt: fixture.now)
            try await fixture.store.recordActivity(activity)
            func report(_ token: String) async throws {
                _ = try await fixture.store.recordUpdateToken(
                    appID: app.id,
                    id: activity.id,
                    activityID: "A-1",
                    token: token,
                    frequentPushesEnabled: false,
                    at: fixture.now
                )
            }
            try await report("aa01")
            let firstReceived = fixture.now
            fixture.clock.advance(by: 60)
            try await report("aa02")  // the device rotated its token
            let secondReceived = fixture.now
            fixture.clock.advance(by: 60)

            let job = try await fixture.leasedActivityUpdateJob(for: app)
            let query = ActivityUpdateQuery(appID: app.id, eventID: event.id, environment: .sandbox)
            let row = try #require(try await fixture.store.updateAudiencePage(query, after: 0, limit: 10).first)
            #expect(row.token == "aa02")

            func commit410(token: String, at invalidSince: Date) async throws -> ActivityState? {
                try await fixture.store.commitActivityUpdateBatch(
                    ActivityUpdateBatch(
                        appID: app.id,
                        jobID: job.id,
                        leaseOwner: "worker",
                        timestamp: 1,
                        accepted: [],
                        ended: [],
                        invalidatedUpdateTokens: [
                            row.rowID: TokenInvalidation(
                                reason: .unregistered,
                                apnsTimestampMilliseconds: Int64(invalidSince.timeIntervalSince1970 * 1000),
                                token: token
                            )
                        ],
                        progress: JobProgress(attempted: 1, failed: 1),
                        checkpoint: nil
                    ),
                    at: fixture.now
                )
                return try await fixture.store.activity(appID: app.id, id: activity.id)?.state
            }

            // The old token, dead after the new one came: not the activity's token any more.
            #expect(try await commit410(token: "aa01", at: fixture.now) == .active)
            // The current token, seen dead before the device sent it: it works again.
            #expect(try await commit410(token: "aa02", at: firstReceived.addingTimeInterval(30)) == .active)
            #expect(try await fixture.store.updateAudiencePage(query, after: 0, limit: 10).map(\.token) == ["aa02"])
            // The current token, dead at its receipt or after: the activity is over.
            #expect(try await commit410(token: "aa02", at: secondReceived) == .ended)
            #expect(try await fixture.store.updateAudiencePage(query, after: 0, limit: 10).isEmpty)
        }
    }
}
