import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

/// What the start fan-out needs of the store: audiences by tags, users or tokens, their size, the
/// job list, outcome counts and the retirements a batch made.
@Suite("Fan-out support")
struct FanOutContractTests {
    @Test(
        "an audience narrows to any of its tags, user IDs or tokens, and counts what it pages",
        arguments: Backend.allCases
    )
    func audienceFilters(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let registrations = (0..<10).map { index in
                TokenContractTests.registration(index, tags: index < 3 ? ["arsenal"] : (index < 5 ? ["chelsea"] : []))
            }
            _ = try await fixture.store.upsertPushToStartTokens(appID: app.id, registrations, at: fixture.now)
            let everyone = AudienceQuery(appID: app.id, environment: .sandbox, attributesType: "MatchAttributes")
            #expect(try await fixture.store.audienceExtent(everyone).count == 10)

            var tagged = everyone
            tagged.anyTags = ["arsenal", "chelsea"]
            #expect(
                try await fixture.store.audiencePage(tagged, after: 0, limit: 100).map(\.deviceID)
                    == (0..<5).map { "device-\($0)" }
            )
            #expect(try await fixture.store.audienceExtent(tagged).count == 5)

            var users = everyone
            users.userIDs = ["user-2", "user-4", "nobody"]
            #expect(
                try await fixture.store.audiencePage(users, after: 0, limit: 100).map(\.deviceID) == [
                    "device-2", "device-4",
                ]
            )

            var tokens = everyone
            tokens.tokens = [String(format: "%064x", 7)]
            #expect(try await fixture.store.audiencePage(tokens, after: 0, limit: 100).map(\.deviceID) == ["device-7"])
            #expect(try await fixture.store.audienceExtent(tokens).count == 1)
        }
    }

    @Test(
        "a resumed audience leaves out tokens with a final outcome in the job, but not those waiting for a retry",
        arguments: Backend.allCases
    )
    func finalOutcomesExcluded(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await DeliveryContractTests.scene(fixture, count: 4)
            let deliveries = [
                Delivery(
                    jobID: scene.job.id,
                    tokenRowID: scene.tokens[0].rowID,
                    outcome: .rejected,
                    status: 400,
                    reason: .badPriority,
                    sentAt: fixture.now,
                    completedAt: fixture.now
                ),
                Delivery(
                    jobID: scene.job.id,
                    tokenRowID: scene.tokens[1].rowID,
                    outcome: .failed,
                    status: 429,
                    reason: .tooManyRequests,
                    sentAt: fixture.now,
                    completedAt: fixture.now
                ),
            ]
            try await fixture.store.commitDeliveryBatch(
                DeliveryBatch(
                    appID: scene.app.id,
                    jobID: scene.job.id,
                    leaseOwner: "worker",
                    deliveries: deliveries,
                    startedEventID: scene.event.id,
                    progress: JobProgress(attempted: 2, failed: 2),
                    checkpoint: nil
                ),
                at: fixture.now
            )
            let query = AudienceQuery(
                appID: scene.app.id,
                environment: .sandbox,
                attributesType: "MatchAttributes",
                excludingStartsOf: scene.event.id,
                excludingFinalOutcomesOf: scene.job.id
            )
            #expect(
                try await fixture.store.audiencePage(query, after: 0, limit: 10).map(\.rowID)
                    == scene.tokens[1...].map(\.rowID)
            )
            let counts = try await fixture.store.deliveryCounts(appID: scene.app.id, jobIDs: [scene.job.id])
            #expect(
                Set(counts) == [
                    DeliveryCount(outcome: .failed, reason: .tooManyRequests, count: 1),
                    DeliveryCount(outcome: .rejected, reason: .badPriority, count: 1),
                ]
            )
        }
    }

    @Test(
        "a job's uncertain tokens, across its parts, are an audience of their own, less those the start ledger holds",
        arguments: Backend.allCases
    )
    func uncertainAudience(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            _ = try await fixture.store.upsertPushToStartTokens(
                appID: app.id,
                (0..<5).map { TokenContractTests.registration($0) },
                at: fixture.now
            )
            let everyone = AudienceQuery(appID: app.id, environment: .sandbox, attributesType: "MatchAttributes")
            let tokens = try await fixture.store.audiencePage(everyone, after: 0, limit: 10).map(\.rowID)
            let (parent, parts) = PartitionedJobContractTests.fanOut(fixture, app: app, parts: 1)
            try await fixture.store.enqueueJobs([parent] + parts)
            _ = try await fixture.store.leaseJobs(
                owner: "worker",
                kinds: [.startFanOutPartition],
                now: fixture.now,
                leaseDuration: .seconds(60),
                limit: 1
            )
            func batch(_ outcomes: [(Int, DeliveryOutcome, Int)]) -> DeliveryBatch {
                DeliveryBatch(
                    appID: app.id,
                    jobID: parts[0].id,
                    leaseOwner: "worker",
                    deliveries: outcomes.map { index, outcome, attempt in
                        Delivery(
                            jobID: parts[0].id,
                            tokenRowID: tokens[index],
                            attempt: attempt,
                            outcome: outcome,
                            sentAt: fixture.now,
                            completedAt: fixture.now
                        )
                    },
                    startedEventID: event.id,
                    progress: JobProgress(attempted: Int64(outcomes.count)),
                    checkpoint: nil
                )
            }
            // Tokens 0 and 2 went uncertain, 1 failed, 3 started; 4 was never sent.
            try await fixture.store.commitDeliveryBatch(
                batch([(0, .uncertain, 1), (1, .failed, 3), (2, .uncertain, 1), (3, .accepted, 1)]),
                at: fixture.now
            )

            var resend = everyone
            resend.uncertainIn = parent.id
            #expect(
                try await fixture.store.audiencePage(resend, after: 0, limit: 10).map(\.rowID) == [
                    tokens[0], tokens[2],
                ]
            )
            #expect(try await fixture.store.audienceExtent(resend).count == 2)
            resend.uncertainIn = parts[0].id
            #expect(
                try await fixture.store.audienceRecipients(resend, after: tokens[0], limit: 10).map(\.rowID) == [
                    tokens[2]
                ]
            )

            // Token 2 started since (a second send of the same part, under the resend policy): the
            // start ledger holds it, so a resend through the ledger leaves it out.
            try await fixture.store.commitDeliveryBatch(batch([(2, .accepted, 2)]), at: fixture.now)
            resend.uncertainIn = parent.id
            resend.excludingStartsOf = event.id
            #expect(try await fixture.store.audiencePage(resend, after: 0, limit: 10).map(\.rowID) == [tokens[0]])
            #expect(try await fixture.store.audienceExtent(resend).count == 1)
            // A job without uncertain tokens has an empty one.
            resend.uncertainIn = JobID()
            #expect(try await fixture.store.audienceExtent(resend).count == 0)
        }
    }

    @Test(
        """
        the activities accepted input-push-token starts began are written with the batch, with their token's \
        frequent-pushes flag
        """,
        arguments: Backend.allCases
    )
    func startingActivities(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await DeliveryContractTests.scene(fixture, count: 3)
            var batch = DeliveryContractTests.batch(scene, scene.tokens[0..<1], at: fixture.now)
            batch.startingActivities = StartingActivities(
                environment: .sandbox,
                lastTimestampSent: 1_700_000_000,
                pushToStartTokenRowIDs: [scene.tokens[0].rowID]
            )
            try await fixture.store.commitDeliveryBatch(batch, at: fixture.now)
            batch = DeliveryContractTests.batch(scene, scene.tokens[1..<2], at: fixture.now)
            batch.startingActivities = StartingActivities(
                environment: .sandbox,
                lastTimestampSent: 1_700_000_000,
                pushToStartTokenRowIDs: [scene.tokens[1].rowID]
            )
            try await fixture.store.commitDeliveryBatch(batch, at: fixture.now)

            for (index, token) in scene.tokens.enumerated() {
                let activity = try await fixture.store.startingActivity(
                    appID: scene.app.id,
                    eventID: scene.event.id,
                    environment: .sandbox,
                    pushToStartToken: token.token
                )
                if index == 2 {
                    #expect(activity == nil)
                    continue
                }
                #expect(activity?.state == .starting)
                #expect(activity?.lastTimestampSent == 1_700_000_000)
                #expect(activity?.pushToStartTokenRowID == token.rowID)
                #expect(activity?.frequentPushesEnabled == token.frequentPushesEnabled)
            }
        }
    }

    @Test(
        "a batch counts the tokens its 410s retired, and the job keeps its audience size",
        arguments: Backend.allCases
    )
    func retiredCount(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await DeliveryContractTests.scene(fixture)
            try await fixture.store.commitDeliveryBatch(
                DeliveryContractTests.batch(scene, scene.tokens[0..<3], at: fixture.now),
                at: fixture.now
            )
            let job = try #require(try await fixture.store.job(appID: scene.app.id, id: scene.job.id))
            #expect(job.progress.retired == 1)
            #expect(job.progress.total == nil)

            let sized = Job(
                appID: scene.app.id,
                kind: .startFanOut,
                dueAt: fixture.now,
                progress: JobProgress(total: 42),
                createdAt: fixture.now
            )
            try await fixture.store.enqueueJob(sized)
            #expect(try await fixture.store.job(appID: scene.app.id, id: sized.id)?.progress.total == 42)
        }
    }

    @Test(
        """
        a batch sent again with its commit ID after it was applied (its answer lost) changes nothing; the next \
        batch counts
        """,
        arguments: Backend.allCases
    )
    func batchAppliedOnce(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await DeliveryContractTests.scene(fixture, count: 4)
            var first = DeliveryContractTests.batch(scene, scene.tokens[0..<2], at: fixture.now)
            first.startingActivities = StartingActivities(
                environment: .sandbox,
                lastTimestampSent: 1_700_000_000,
                pushToStartTokenRowIDs: [scene.tokens[0].rowID]
            )
            try await fixture.store.commitDeliveryBatch(first, at: fixture.now)
            let once = try #require(try await fixture.store.job(appID: scene.app.id, id: scene.job.id)).progress

            try await fixture.store.commitDeliveryBatch(first, at: fixture.now)
            let again = try #require(try await fixture.store.job(appID: scene.app.id, id: scene.job.id)).progress
            #expect(again == once)

            let next = DeliveryContractTests.batch(scene, scene.tokens[2..<4], at: fixture.now)
            try await fixture.store.commitDeliveryBatch(next, at: fixture.now)
            let after = try #require(try await fixture.store.job(appID: scene.app.id, id: scene.job.id)).progress
            #expect(after.attempted == once.attempted + next.progress.attempted)
        }
    }

    @Test("an app's jobs list newest first, page by page", arguments: Backend.allCases)
    func jobList(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            var ids: [JobID] = []
            for index in 0..<5 {
                let job = Job(
                    appID: app.id,
                    kind: .startFanOut,
                    dueAt: fixture.now,
                    createdAt: fixture.now.addingTimeInterval(Double(index))
                )
                try await fixture.store.enqueueJob(job)
                ids.append(job.id)
            }
            try await fixture.store.enqueueJob(
                Job(appID: other.id, kind: .startFanOut, dueAt: fixture.now, createdAt: fixture.now)
            )
            let first = try await fixture.store.jobs(appID: app.id, kinds: nil, before: nil, limit: 3)
            #expect(first.map(\.id) == ids.reversed().prefix(3).map { $0 })
            let last = try #require(first.last)
            let second = try await fixture.store.jobs(
                appID: app.id,
                kinds: [.startFanOut],
                before: JobListPosition(createdAt: last.createdAt, id: last.id),
                limit: 3
            )
            #expect(second.map(\.id) == [ids[1], ids[0]])
            #expect(try await fixture.store.jobs(appID: app.id, kinds: [.broadcast], before: nil, limit: 3).isEmpty)
        }
    }
}
