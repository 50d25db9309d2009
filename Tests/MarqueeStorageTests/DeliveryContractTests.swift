import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

@Suite("Delivery batches and the start ledger")
struct DeliveryContractTests {
    /// An app with an event, `count` tokens and a start job leased by "worker".
    struct Scene {
        var app: App
        var event: Event
        var tokens: [PushToStartToken]
        var job: Job
    }

    static func scene(_ fixture: StoreFixture, count: Int = 6) async throws -> Scene {
        let app = try await fixture.makeApp()
        let event = try await fixture.makeEvent(for: app)
        _ = try await fixture.store.upsertPushToStartTokens(
            appID: app.id,
            (0..<count).map { TokenContractTests.registration($0) },
            at: fixture.now
        )
        let tokens = try await fixture.store.audiencePage(
            AudienceQuery(appID: app.id, environment: .sandbox, attributesType: "MatchAttributes"),
            after: 0,
            limit: 100
        )
        let job = try await leasedStartJob(app, event, fixture)
        return Scene(app: app, event: event, tokens: tokens, job: job)
    }

    /// A start job of `event`, enqueued and leased to "worker" as a running part is.
    static func leasedStartJob(_ app: App, _ event: Event, _ fixture: StoreFixture) async throws -> Job {
        let job = Job(
            appID: app.id,
            kind: .startFanOut,
            arguments: ["event": .string(event.id.description)],
            dueAt: fixture.now,
            createdAt: fixture.now
        )
        try await fixture.store.enqueueJob(job)
        _ = try await fixture.store.leaseJobs(
            owner: "worker",
            kinds: nil,
            now: fixture.now,
            leaseDuration: .seconds(60),
            limit: 1
        )
        return job
    }

    @Test("delivery counts add up the jobs asked for, of the app only", arguments: Backend.allCases)
    func deliveryCountsOfSeveralJobs(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await Self.scene(fixture)
            // A second part of the same app's start, leased as the first was.
            var part = scene
            part.job = try await Self.leasedStartJob(scene.app, scene.event, fixture)
            let other = try await Self.scene(fixture)
            for (scene, tokens) in [
                (scene, scene.tokens[0..<3]), (part, scene.tokens[3..<6]), (other, other.tokens[0..<3]),
            ] {
                try await fixture.store.commitDeliveryBatch(Self.batch(scene, tokens, at: fixture.now), at: fixture.now)
            }
            // Each batch has one token APNs called unregistered; the other app's job is not counted.
            #expect(
                try await fixture.store.deliveryCounts(
                    appID: scene.app.id,
                    jobIDs: [scene.job.id, part.job.id, other.job.id]
                ) == [DeliveryCount(outcome: .tokenInvalid, reason: .unregistered, count: 2)]
            )
            #expect(try await fixture.store.deliveryCounts(appID: scene.app.id, jobIDs: []).isEmpty)
        }
    }

    static func batch(
        _ scene: Scene,
        _ tokens: ArraySlice<PushToStartToken>,
        owner: String = "worker",
        at: Date
    ) -> DeliveryBatch {
        let deliveries = tokens.enumerated().map { offset, token in
            Delivery(
                jobID: scene.job.id,
                tokenRowID: token.rowID,
                outcome: offset == 1 ? .tokenInvalid : .accepted,
                status: offset == 1 ? 410 : 200,
                // The third accepted without an apns-id in its answer: the ledger keeps none.
                apnsID: offset == 2 ? nil : UUID(),
                reason: offset == 1 ? .unregistered : nil,
                sentAt: at,
                completedAt: at
            )
        }
        let invalid =
            tokens.dropFirst().first.map {
                [
                    $0.rowID: TokenInvalidation(
                        reason: .unregistered,
                        apnsTimestampMilliseconds: Int64(at.timeIntervalSince1970 * 1000) + 1
                    )
                ]
            } ?? [:]
        return DeliveryBatch(
            appID: scene.app.id,
            jobID: scene.job.id,
            leaseOwner: owner,
            deliveries: deliveries,
            startedEventID: scene.event.id,
            invalidations: invalid,
            progress: JobProgress(
                attempted: Int64(deliveries.count),
                succeeded: Int64(deliveries.count - invalid.count),
                failed: Int64(invalid.count)
            ),
            checkpoint: tokens.last.map { String($0.rowID) }
        )
    }

    @Test("a batch writes outcomes, ledger, retirements, progress and checkpoint together", arguments: Backend.allCases)
    func commit(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await Self.scene(fixture)
            let first = Self.batch(scene, scene.tokens[0..<3], at: fixture.now)
            try await fixture.store.commitDeliveryBatch(first, at: fixture.now)

            // An accepted start is recorded once, in the ledger, with what APNs answered; the other
            // outcomes as deliveries.
            let deliveries = try await fixture.store.deliveries(appID: scene.app.id, jobID: scene.job.id)
            #expect(deliveries == first.deliveries.filter { $0.outcome != .accepted })
            let records = try await fixture.store.startRecords(
                appID: scene.app.id,
                eventID: scene.event.id,
                among: scene.tokens.map(\.rowID)
            )
            #expect(records == first.deliveries.filter { $0.outcome == .accepted }.map(Self.startRecord))
            let started = try await fixture.store.startedTokens(
                appID: scene.app.id,
                eventID: scene.event.id,
                among: scene.tokens.map(\.rowID)
            )
            #expect(started == [scene.tokens[0].rowID, scene.tokens[2].rowID])
            let job = try #require(try await fixture.store.job(appID: scene.app.id, id: scene.job.id))
            // The 410 of the second token is newer than its registration: retired, and counted.
            #expect(job.progress == JobProgress(attempted: 3, succeeded: 2, failed: 1, retired: 1))
            #expect(job.checkpoint == String(scene.tokens[2].rowID))

            // The audience of a resumed start skips what the ledger holds and what was retired.
            let remaining = try await fixture.store.audiencePage(
                AudienceQuery(
                    appID: scene.app.id,
                    environment: .sandbox,
                    attributesType: "MatchAttributes",
                    excludingStartsOf: scene.event.id
                ),
                after: 0,
                limit: 100
            )
            #expect(remaining.map(\.rowID) == scene.tokens[3...].map(\.rowID))

            // Committing the same window again (a resumed worker) adds nothing twice.
            try await fixture.store.commitDeliveryBatch(first, at: fixture.now)
            #expect(try await fixture.store.deliveries(appID: scene.app.id, jobID: scene.job.id) == deliveries)
            #expect(
                try await fixture.store.startRecords(
                    appID: scene.app.id,
                    eventID: scene.event.id,
                    among: scene.tokens.map(\.rowID)
                ) == records
            )
        }
    }

    @Test(
        "a batch with entries the ledger holds already writes the others and keeps those entries' first start",
        arguments: Backend.allCases
    )
    func ledgerEntriesThereAlready(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await Self.scene(fixture, count: 5)
            let first = Self.batch(scene, scene.tokens[0..<3], at: fixture.now)
            try await fixture.store.commitDeliveryBatch(first, at: fixture.now)
            // Another window that overlaps the first by one token, accepted again a second later.
            let later = fixture.now.addingTimeInterval(1)
            let second = Self.batch(scene, scene.tokens[2..<5], at: later)
            try await fixture.store.commitDeliveryBatch(second, at: later)

            let records = try await fixture.store.startRecords(
                appID: scene.app.id,
                eventID: scene.event.id,
                among: scene.tokens.map(\.rowID)
            )
            let accepted = (first.deliveries + second.deliveries.dropFirst()).filter { $0.outcome == .accepted }
            #expect(records == accepted.map(Self.startRecord))
        }
    }

    @Test(
        "an uncertain start is a delivery of its own, counted apart, and a resumed run leaves it out",
        arguments: Backend.allCases
    )
    func uncertainStart(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await Self.scene(fixture, count: 3)
            // The first token's start was written to APNs and got no answer: the device may have it.
            let uncertain = Delivery(
                jobID: scene.job.id,
                tokenRowID: scene.tokens[0].rowID,
                outcome: .uncertain,
                sentAt: fixture.now,
                completedAt: fixture.now
            )
            try await fixture.store.commitDeliveryBatch(
                DeliveryBatch(
                    appID: scene.app.id,
                    jobID: scene.job.id,
                    leaseOwner: "worker",
                    deliveries: [uncertain],
                    startedEventID: scene.event.id,
                    progress: JobProgress(attempted: 1, uncertain: 1),
                    checkpoint: String(scene.tokens[0].rowID)
                ),
                at: fixture.now
            )
            #expect(try await fixture.store.deliveries(appID: scene.app.id, jobID: scene.job.id) == [uncertain])
            #expect(
                try await fixture.store.deliveryCounts(appID: scene.app.id, jobIDs: [scene.job.id]) == [
                    DeliveryCount(outcome: .uncertain, reason: nil, count: 1)
                ]
            )
            let job = try #require(try await fixture.store.job(appID: scene.app.id, id: scene.job.id))
            #expect(job.progress == JobProgress(attempted: 1, uncertain: 1))
            // It is not in the start ledger (APNs never said it started), but it is final in its
            // job: a resumed run does not send it again.
            #expect(
                try await fixture.store.startedTokens(
                    appID: scene.app.id,
                    eventID: scene.event.id,
                    among: scene.tokens.map(\.rowID)
                ).isEmpty
            )
            let resumed = AudienceQuery(
                appID: scene.app.id,
                environment: .sandbox,
                attributesType: "MatchAttributes",
                excludingStartsOf: scene.event.id,
                excludingFinalOutcomesOf: scene.job.id
            )
            #expect(
                try await fixture.store.audiencePage(resumed, after: 0, limit: 10).map(\.rowID)
                    == scene.tokens[1...].map(\.rowID)
            )
        }
    }

    /// The ledger entry an accepted start of the scene's job makes.
    static func startRecord(_ delivery: Delivery) -> StartRecord {
        StartRecord(
            tokenRowID: delivery.tokenRowID,
            jobID: delivery.jobID,
            attempt: delivery.attempt,
            apnsID: delivery.apnsID,
            sentAt: delivery.sentAt,
            startedAt: delivery.completedAt
        )
    }

    @Test(
        "the first accepted start makes the event live; an edit read before it does not take that back",
        arguments: Backend.allCases
    )
    func firstStartMakesTheEventLive(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await Self.scene(fixture)
            #expect(scene.event.state == .scheduled)
            // A batch of 410s only (the second token of a window) starts nobody: still scheduled.
            var refusals = Self.batch(scene, scene.tokens[0..<2], at: fixture.now)
            refusals.deliveries = refusals.deliveries.filter { $0.outcome != .accepted }
            try await fixture.store.commitDeliveryBatch(refusals, at: fixture.now)
            #expect(try await fixture.store.event(appID: scene.app.id, id: scene.event.id)?.state == .scheduled)

            fixture.clock.advance(by: 5)
            try await fixture.store.commitDeliveryBatch(
                Self.batch(scene, scene.tokens[2..<4], at: fixture.now),
                at: fixture.now
            )
            let live = try #require(try await fixture.store.event(appID: scene.app.id, id: scene.event.id))
            #expect(live.state == .live)
            #expect(live.updatedAt == fixture.now)

            // An edit that read the event while it was scheduled keeps it live; the end is still an edit away.
            var stale = scene.event
            stale.title = "Arsenal v Chelsea (kick-off delayed)"
            #expect(try await fixture.store.updateEvent(stale).state == .live)
            stale.state = .ended
            #expect(try await fixture.store.updateEvent(stale).state == .ended)
            // A later batch of the same job (the last devices' answers) leaves an ended event ended.
            try await fixture.store.commitDeliveryBatch(
                Self.batch(scene, scene.tokens[4..<6], at: fixture.now),
                at: fixture.now
            )
            #expect(try await fixture.store.event(appID: scene.app.id, id: scene.event.id)?.state == .ended)
        }
    }

    @Test("a batch from a worker that lost its lease leaves nothing behind", arguments: Backend.allCases)
    func leaseLost(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await Self.scene(fixture)
            let stale = Self.batch(scene, scene.tokens[0..<3], owner: "crashed-worker", at: fixture.now)
            await #expect(throws: StoreError.leaseLost(scene.job.id)) {
                try await fixture.store.commitDeliveryBatch(stale, at: fixture.now)
            }
            try await Self.expectNothingWritten(fixture, scene)
        }
    }

    @Test("a transaction that fails halfway leaves nothing behind", arguments: Backend.allCases)
    func failsHalfway(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await Self.scene(fixture)
            // The second token's 410 is written before the starts, whose event is another app's:
            // the batch is refused there, and the delivery already written must be gone.
            let other = try await fixture.makeApp("Other")
            let foreignEvent = try await fixture.makeEvent(for: other)
            var batch = Self.batch(scene, scene.tokens[0..<3], at: fixture.now)
            batch.startedEventID = foreignEvent.id
            await #expect(throws: StoreError.notFound(entity: "event", id: "\(foreignEvent.id)")) {
                try await fixture.store.commitDeliveryBatch(batch, at: fixture.now)
            }
            try await Self.expectNothingWritten(fixture, scene)
            #expect(
                try await fixture.store.startedTokens(
                    appID: other.id,
                    eventID: foreignEvent.id,
                    among: scene.tokens.map(\.rowID)
                ).isEmpty
            )
        }
    }

    @Test("a token deleted since the audience was read does not hold its batch up", arguments: Backend.allCases)
    func tokenDeletedMeanwhile(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await Self.scene(fixture)
            // The first token (started) and the second (410) are unregistered while their pushes
            // are out; a refused batch would make the job send the whole window again.
            for token in scene.tokens[0..<2] {
                #expect(
                    try await fixture.store.deletePushToStartToken(
                        appID: scene.app.id,
                        environment: .sandbox,
                        attributesType: "MatchAttributes",
                        token: token.token
                    )
                )
            }
            let batch = Self.batch(scene, scene.tokens[0..<3], at: fixture.now)
            try await fixture.store.commitDeliveryBatch(batch, at: fixture.now)

            let job = try #require(try await fixture.store.job(appID: scene.app.id, id: scene.job.id))
            // Every push counts as sent; nothing was left to retire.
            #expect(job.progress == JobProgress(attempted: 3, succeeded: 2, failed: 1, retired: 0))
            #expect(job.checkpoint == String(scene.tokens[2].rowID))
            #expect(
                try await fixture.store.startedTokens(
                    appID: scene.app.id,
                    eventID: scene.event.id,
                    among: [scene.tokens[2].rowID]
                ) == [scene.tokens[2].rowID]
            )
            #expect(try await fixture.store.deliveries(appID: scene.app.id, jobID: scene.job.id).isEmpty)
            let audience = try await fixture.store.audiencePage(
                AudienceQuery(
                    appID: scene.app.id,
                    environment: .sandbox,
                    attributesType: "MatchAttributes",
                    excludingStartsOf: scene.event.id
                ),
                after: 0,
                limit: 100
            )
            #expect(audience.map(\.rowID) == scene.tokens[3...].map(\.rowID))
        }
    }

    static func expectNothingWritten(_ fixture: StoreFixture, _ scene: Scene) async throws {
        #expect(try await fixture.store.deliveries(appID: scene.app.id, jobID: scene.job.id).isEmpty)
        #expect(
            try await fixture.store.startedTokens(
                appID: scene.app.id,
                eventID: scene.event.id,
                among: scene.tokens.map(\.rowID)
            ).isEmpty
        )
        let job = try #require(try await fixture.store.job(appID: scene.app.id, id: scene.job.id))
        #expect(job.progress == JobProgress())
        #expect(job.checkpoint == nil)
        let audience = try await fixture.store.audiencePage(
            AudienceQuery(appID: scene.app.id, environment: .sandbox, attributesType: "MatchAttributes"),
            after: 0,
            limit: 100
        )
        #expect(audience.count == scene.tokens.count)
    }
}
