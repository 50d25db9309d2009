import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

/// What the `confirm` policy records: the devices a start job left uncertain, each one's report and
/// what its confirmation did; a confirmed device enters the start ledger, an absent one is queued
/// for the start once per event, and late joiners can tell a device with an uncertain start.
@Suite("Start confirmations")
struct StartConfirmationContractTests {
    @Test(
        "a start job's uncertain devices are read with their reports, decided once, and confirmed or queued as absent",
        arguments: Backend.allCases
    )
    func confirmations(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            _ = try await store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now)
            // Devices 0–4 registered their app's device token; device 5 did not.
            let registrations = (0..<6).map { index in
                var registration = TokenContractTests.registration(index)
                if index < 5 { registration.deviceToken = String(format: "%064x", 1000 + index) }
                return registration
            }
            _ = try await store.upsertPushToStartTokens(appID: app.id, registrations, at: fixture.now)
            let everyone = AudienceQuery(appID: app.id, environment: .sandbox, attributesType: "MatchAttributes")
            let tokens = try await store.audiencePage(everyone, after: 0, limit: 10).map(\.rowID)
            let arguments: JSONValue = ["eventID": .string(event.id.description), "environment": "sandbox"]
            let start = Job(
                appID: app.id,
                kind: .startFanOut,
                arguments: arguments,
                dueAt: fixture.now,
                createdAt: fixture.now
            )
            let part = Job(
                appID: app.id,
                kind: .startFanOutPartition,
                parentID: start.id,
                arguments: arguments,
                dueAt: fixture.now,
                createdAt: fixture.now
            )
            try await store.enqueueJobs([start, part])
            _ = try await store.leaseJobs(
                owner: "worker",
                kinds: [.startFanOutPartition],
                now: fixture.now,
                leaseDuration: .seconds(60),
                limit: 1
            )
            let sentAt = fixture.now
            // Devices 0, 1, 2, 3 and 5 went uncertain; 4 started.
            try await store.commitDeliveryBatch(
                DeliveryBatch(
                    appID: app.id,
                    jobID: part.id,
                    leaseOwner: "worker",
                    deliveries: [0, 1, 2, 3, 5].map {
                        Delivery(
                            jobID: part.id,
                            tokenRowID: tokens[$0],
                            attempt: 1,
                            outcome: .uncertain,
                            sentAt: sentAt,
                            completedAt: sentAt
                        )
                    }
                        + [
                            Delivery(
                                jobID: part.id,
                                tokenRowID: tokens[4],
                                attempt: 1,
                                outcome: .accepted,
                                sentAt: sentAt,
                                completedAt: sentAt
                            )
                        ],
                    startedEventID: event.id,
                    progress: JobProgress(attempted: 6),
                    checkpoint: nil
                ),
                at: fixture.now
            )
            #expect(
                try await store.uncertainStartTokens(appID: app.id, eventID: event.id, among: tokens)
                    == Set([0, 1, 2, 3, 5].map { tokens[$0] })
            )
            #expect(try await store.uncertainStartTokens(appID: app.id, eventID: EventID(), among: tokens).isEmpty)

            let unconfirmed = try await store.unconfirmedStarts(
                appID: app.id,
                eventID: event.id,
                jobID: start.id,
                afterRowID: 0,
                limit: 10
            )
            #expect(unconfirmed.map(\.tokenRowID) == [0, 1, 2, 3, 5].map { tokens[$0] })
            #expect(unconfirmed.map { $0.deviceToken != nil } == [true, true, true, true, false])
            #expect(
                unconfirmed.allSatisfy {
                    $0.sentAt == sentAt && $0.presence == nil && $0.watchedSince == nil && $0.askedAt == nil
                        && !$0.restarted
                }
            )
            // Read in pages by token row; another job's devices are not this one's.
            #expect(
                try await store.unconfirmedStarts(
                    appID: app.id,
                    eventID: event.id,
                    jobID: start.id,
                    afterRowID: tokens[1],
                    limit: 2
                ).map(\.tokenRowID) == [tokens[2], tokens[3]]
            )
            #expect(
                try await store.unconfirmedStarts(
                    appID: app.id,
                    eventID: event.id,
                    jobID: JobID(),
                    afterRowID: 0,
                    limit: 10
                ).isEmpty
            )

            // The apps of 1, 2 and 3 report: showing, absent, ended.
            fixture.clock.advance(by: 90)
            for (index, state) in [(1, PresenceState.showing), (2, .absent), (3, .ended)] {
                _ = try await store.recordPresence(
                    appID: app.id,
                    eventID: event.id,
                    tokenRowID: tokens[index],
                    PresenceReport(
                        environment: .sandbox,
                        state: state,
                        activityID: state == .showing ? "activity-1" : nil
                    ),
                    bound: .perMinute(10),
                    at: fixture.now
                )
            }
            let reported = try await store.unconfirmedStarts(
                appID: app.id,
                eventID: event.id,
                jobID: start.id,
                afterRowID: 0,
                limit: 10
            )
            #expect(reported.map(\.presence) == [nil, .showing, .absent, .ended, nil])
            #expect(reported[1].reportedAt == fixture.now)

            // One pass: all watched, 0 asked, 1 confirmed, 2 restarted, 3 ended, 5 uncertain.
            var steps = ConfirmationSteps(appID: app.id, eventID: event.id, environment: .sandbox, jobID: start.id)
            steps.watched = reported.map(\.tokenRowID)
            steps.asked = [tokens[0]]
            steps.decided = [(1, ConfirmationOutcome.confirmed), (2, .restarted), (3, .ended), (5, .uncertain)].map {
                ConfirmationSteps.Decision(tokenRowID: tokens[$0.0], outcome: $0.1, sentAt: sentAt)
            }
            #expect(try await store.recordConfirmationSteps(steps, at: fixture.now) == 1)

            let left = try await store.unconfirmedStarts(
                appID: app.id,
                eventID: event.id,
                jobID: start.id,
                afterRowID: 0,
                limit: 10
            )
            #expect(left.map(\.tokenRowID) == [tokens[0]])
            #expect(left.first?.watchedSince == fixture.now && left.first?.askedAt == fixture.now)
            let counts = try await store.confirmationCounts(appID: app.id, jobID: start.id)
            #expect(counts.watched == 5 && counts.asked == 1 && counts.waiting == 1)
            #expect(
                counts[.confirmed] == 1 && counts[.restarted] == 1 && counts[.ended] == 1 && counts[.uncertain] == 1
            )

            // The confirmed device is in the ledger: no start reaches it, and it is no longer uncertain.
            #expect(
                try await store.startedTokens(appID: app.id, eventID: event.id, among: tokens) == [
                    tokens[1], tokens[4],
                ]
            )
            #expect(
                try await store.uncertainStartTokens(appID: app.id, eventID: event.id, among: tokens)
                    == Set([0, 2, 3, 5].map { tokens[$0] })
            )

            // The absent device is queued, with the start it makes up for; late joining off does not
            // prune it. (It waits while the event's start part is at work.)
            try await store.completeJob(id: part.id, owner: "worker", at: fixture.now)
            var off = try #require(try await store.event(appID: app.id, id: event.id))
            off.lateJoiners = false
            _ = try await store.updateEvent(off)
            #expect(try await store.prunePendingStarts() == 0)
            let claimed = try await store.claimPendingStarts(
                owner: "pump",
                now: fixture.now,
                until: fixture.now.addingTimeInterval(30),
                limit: 10
            )
            #expect(claimed.map(\.tokenRowID) == [tokens[2]])
            #expect(claimed.first?.reason == .absent && claimed.first?.sourceJobID == start.id)
            try await store.enqueueJobs([], consumingPendingStarts: claimed.map(\.id), owner: "pump", at: fixture.now)

            // At most once per device and event: a later start's confirmation cannot queue it again.
            let later = JobID()
            var again = ConfirmationSteps(appID: app.id, eventID: event.id, environment: .sandbox, jobID: later)
            again.watched = [tokens[2]]
            again.decided = [
                ConfirmationSteps.Decision(tokenRowID: tokens[2], outcome: .restarted, sentAt: fixture.now)
            ]
            #expect(try await store.recordConfirmationSteps(again, at: fixture.now) == 0)
            #expect(try await store.pendingStartCount(appID: app.id, eventID: event.id, environment: .sandbox) == 0)
            #expect(try await store.confirmationCounts(appID: app.id, jobID: later)[.uncertain] == 1)

            // The funnel counts every device in the ledger in its environment: 4 (sent by the start),
            // 1 (confirmed for it), and 0, confirmed for a job that is none of the event's starts.
            var elsewhere = ConfirmationSteps(appID: app.id, eventID: event.id, environment: .sandbox, jobID: later)
            elsewhere.decided = [
                ConfirmationSteps.Decision(tokenRowID: tokens[0], outcome: .confirmed, sentAt: fixture.now)
            ]
            _ = try await store.recordConfirmationSteps(elsewhere, at: fixture.now)
            let funnels = try await store.deliveryFunnels(appID: app.id, eventID: event.id)
            #expect(funnels.map(\.environment) == [.sandbox])
            #expect(funnels.first?.counts[.accepted] == 3)
        }
    }
}
