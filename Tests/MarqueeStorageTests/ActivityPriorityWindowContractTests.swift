import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

@Suite("Activity priority windows")
struct ActivityPriorityWindowContractTests {
    @Test(
        "accepted priority-10 pushes count into the activity's hour; after it a new hour begins",
        arguments: Backend.allCases
    )
    func windows(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let activity = Activity(
                appID: app.id,
                eventID: event.id,
                environment: .sandbox,
                frequentPushesEnabled: true,
                createdAt: fixture.now
            )
            try await fixture.store.recordActivity(activity)
            _ = try await fixture.store.recordUpdateToken(
                appID: app.id,
                id: activity.id,
                activityID: "A-1",
                token: "aa01",
                frequentPushesEnabled: true,
                at: fixture.now
            )
            let job = try await fixture.leasedActivityUpdateJob(for: app)
            let query = ActivityUpdateQuery(appID: app.id, eventID: event.id, environment: .sandbox)

            func target() async throws -> ActivityUpdateTarget? {
                try await fixture.store.updateAudiencePage(query, after: 0, limit: 10).first
            }
            func commit(immediate: Bool, downgraded: Int64 = 0) async throws {
                let row = try #require(try await target()).rowID
                try await fixture.store.commitActivityUpdateBatch(
                    ActivityUpdateBatch(
                        appID: app.id,
                        jobID: job.id,
                        leaseOwner: "worker",
                        timestamp: 1,
                        accepted: [row],
                        ended: [],
                        acceptedAtImmediate: immediate ? [row] : [],
                        priorityWindowsEndedAt: fixture.now.addingTimeInterval(-3600),
                        progress: JobProgress(attempted: 1, succeeded: 1, downgraded: downgraded),
                        checkpoint: nil
                    ),
                    at: fixture.now
                )
            }

            let fresh = try #require(try await target())
            #expect(fresh.frequentPushesEnabled && fresh.priorityWindow == nil)
            let opened = fixture.now
            try await commit(immediate: true)
            fixture.clock.advance(by: 600)
            try await commit(immediate: true)
            try await commit(immediate: false, downgraded: 1)
            #expect(try await target()?.priorityWindow == ActivityPriorityWindow(start: opened, sent: 2))

            fixture.clock.advance(by: 3000)  // the hour since `opened` is over
            try await commit(immediate: true)
            #expect(try await target()?.priorityWindow == ActivityPriorityWindow(start: fixture.now, sent: 1))
            let progress = try #require(try await fixture.store.job(appID: app.id, id: job.id)).progress
            #expect(progress.attempted == 4 && progress.downgraded == 1)
        }
    }
}
