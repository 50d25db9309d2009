import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

/// The pending-start queue and what a late joiner gets: the registration hook queues a token once
/// for each live event whose late-join offer it matches; pumps claim disjoint rows, and consume
/// only what they still hold, with the job that sends it; a row waits while a start part of its
/// event is at work; what can no longer be sent is pruned.
@Suite("Pending starts")
struct PendingStartContractTests {
    static func offer(_ event: Event, tags: [String] = [], enabled: Bool = true, at: Date) -> LateJoinOffer {
        LateJoinOffer(
            appID: event.appID,
            eventID: event.id,
            environment: .sandbox,
            attributesType: event.attributesType,
            enabled: enabled,
            everyone: tags.isEmpty,
            tags: tags,
            attributes: ["homeTeam": "Arsenal"],
            contentState: ["homeScore": 0],
            alert: nil,
            inputPushToken: false,
            jobID: JobID(),
            updatedAt: at
        )
    }

    static func keys(_ indices: Range<Int>) -> [RegisteredTokenKey] {
        indices.map {
            RegisteredTokenKey(
                environment: .sandbox,
                attributesType: "MatchAttributes",
                token: String(format: "%064x", $0)
            )
        }
    }

    /// An app and its event, live, offering late joiners everyone in the sandbox, with five
    /// registered tokens (`keys(0..<5)`) none of them queued yet.
    static func liveEventOfferedToEveryone(_ fixture: StoreFixture) async throws -> (App, Event) {
        let app = try await fixture.makeApp()
        let event = try await fixture.makeEvent(for: app)
        _ = try await fixture.store.upsertPushToStartTokens(
            appID: app.id,
            (0..<5).map { TokenContractTests.registration($0) },
            at: fixture.now
        )
        try await fixture.store.recordLateJoinOffer(Self.offer(event, at: fixture.now))
        _ = try await fixture.store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now)
        return (app, event)
    }

    @Test(
        "a token registered while the event is live is queued once if it matches the offer's tags",
        arguments: Backend.allCases
    )
    func hook(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let registrations = (0..<6).map {
                TokenContractTests.registration($0, tags: $0 < 3 ? ["arsenal"] : ["chelsea"])
            }
            _ = try await store.upsertPushToStartTokens(appID: app.id, registrations, at: fixture.now)
            try await store.recordLateJoinOffer(Self.offer(event, tags: ["arsenal"], at: fixture.now))
            let offer = try #require(
                try await store.lateJoinOffer(appID: app.id, eventID: event.id, environment: .sandbox)
            )
            #expect(
                offer.tags == ["arsenal"] && !offer.everyone && offer.alert == nil
                    && offer.contentState == ["homeScore": 0]
            )

            // Scheduled and never started: not live.
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(0..<6), at: fixture.now) == 0)
            _ = try await store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now)
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(0..<6), at: fixture.now) == 3)
            // A refresh queues nothing twice; a token the app does not have queues nothing.
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(0..<8), at: fixture.now) == 0)
            #expect(try await store.pendingStartCount(appID: app.id, eventID: event.id, environment: .sandbox) == 3)
            #expect(try await store.pendingStartCount(appID: app.id, eventID: event.id, environment: .production) == 0)

            // Another app's registration of the same token string reaches nothing of this app.
            let other = try await fixture.makeApp("Other")
            _ = try await store.upsertPushToStartTokens(appID: other.id, registrations, at: fixture.now)
            #expect(try await store.enqueueLateJoiners(appID: other.id, Self.keys(0..<6), at: fixture.now) == 0)

            // Late joining off, for the offer or for the event: nothing is queued, and what was is pruned.
            try await store.recordLateJoinOffer(Self.offer(event, enabled: false, at: fixture.now))
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(3..<6), at: fixture.now) == 0)
            #expect(try await store.prunePendingStarts() == 3)
            try await store.recordLateJoinOffer(Self.offer(event, at: fixture.now))
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(0..<6), at: fixture.now) == 6)
            var off = try #require(try await store.event(appID: app.id, id: event.id))
            off.lateJoiners = false
            #expect(try await store.updateEvent(off).lateJoiners == false)
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(0..<6), at: fixture.now) == 0)
            #expect(try await store.prunePendingStarts() == 6)
        }
    }

    @Test(
        "pumps claim disjoint rows, consume only what they hold with its job, and wait for the event's start parts",
        arguments: Backend.allCases
    )
    func claims(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let (app, event) = try await Self.liveEventOfferedToEveryone(fixture)
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(0..<5), at: fixture.now) == 5)

            let until = fixture.now.addingTimeInterval(30)
            let first = try await store.claimPendingStarts(owner: "a", now: fixture.now, until: until, limit: 2)
            #expect(first.map(\.token) == Self.keys(0..<2).map(\.token))
            #expect(first.allSatisfy { $0.eventID == event.id && $0.environment == .sandbox && $0.reason == .lateJoin })
            let second = try await store.claimPendingStarts(owner: "b", now: fixture.now, until: until, limit: 10)
            #expect(second.map(\.token) == Self.keys(2..<5).map(\.token))
            #expect(try await store.claimPendingStarts(owner: "c", now: fixture.now, until: until, limit: 10).isEmpty)

            // A consumes its rows with its job; it cannot consume B's.
            let job = Job(
                appID: app.id,
                kind: .startFanOut,
                arguments: ["lateJoin": true],
                dueAt: fixture.now,
                createdAt: fixture.now
            )
            try await store.enqueueJobs([job], consumingPendingStarts: first.map(\.id), owner: "a", at: fixture.now)
            #expect(try await store.job(appID: app.id, id: job.id) != nil)
            let stolen = Job(
                appID: app.id,
                kind: .startFanOut,
                arguments: [:],
                dueAt: fixture.now,
                createdAt: fixture.now
            )
            await #expect(throws: StoreError.self) {
                try await store.enqueueJobs(
                    [stolen],
                    consumingPendingStarts: second.map(\.id),
                    owner: "a",
                    at: fixture.now
                )
            }
            #expect(try await store.job(appID: app.id, id: stolen.id) == nil)
            #expect(try await store.pendingStartCount(appID: app.id, eventID: event.id, environment: .sandbox) == 3)

            // B's claim lapses: its rows are claimable again, and B can no longer consume them, but
            // not while a start part of the event in that environment is pending.
            fixture.clock.advance(by: 31)
            await #expect(throws: StoreError.self) {
                try await store.enqueueJobs([], consumingPendingStarts: second.map(\.id), owner: "b", at: fixture.now)
            }
            let part = Job(
                appID: app.id,
                kind: .startFanOutPartition,
                parentID: job.id,
                arguments: ["eventID": .string(event.id.description), "environment": "sandbox"],
                dueAt: fixture.now.addingTimeInterval(3600),
                createdAt: fixture.now
            )
            try await store.enqueueJob(part)
            let later = fixture.now.addingTimeInterval(30)
            #expect(try await store.claimPendingStarts(owner: "c", now: fixture.now, until: later, limit: 10).isEmpty)
            #expect(try await store.cancelJob(appID: app.id, id: job.id, at: fixture.now))
            let third = try await store.claimPendingStarts(owner: "c", now: fixture.now, until: later, limit: 10)
            #expect(third.map(\.id) == second.map(\.id))

            // An event that ended takes nothing: its rows are pruned, and they were never to be sent.
            try await store.dropPendingStarts([third[0].id], owner: "c")
            #expect(try await store.pendingStartCount(appID: app.id, eventID: event.id, environment: .sandbox) == 2)
            _ = try await store.setEventState(appID: app.id, id: event.id, state: .ended, at: fixture.now)
            #expect(try await store.prunePendingStarts() == 2)
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(0..<5), at: fixture.now) == 0)
        }
    }

    @Test(
        """
        once APNs accepted an end in the event's environment, a token registered there is not queued and \
        what was queued is pruned, though the event stays live until it is closed
        """,
        arguments: Backend.allCases
    )
    func afterTheEnd(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let (app, event) = try await Self.liveEventOfferedToEveryone(fixture)
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(0..<2), at: fixture.now) == 2)

            let channels = [
                APNSEnvironment.sandbox: try await fixture.makeActiveChannel(for: event, environment: .sandbox),
                .production: try await fixture.makeActiveChannel(for: event, environment: .production),
            ]
            func end(_ environment: APNSEnvironment, status: Int) async throws {
                let channel = try #require(channels[environment])
                _ = try await store.appendBroadcastLog(
                    BroadcastLogEntry(
                        appID: app.id,
                        channelID: channel.id,
                        apnsRequestID: UUID(),
                        apnsUniqueID: nil,
                        priority: .immediate,
                        timestamp: 1,
                        status: status,
                        reason: nil,
                        latency: .zero,
                        sentAt: fixture.now,
                        event: .end,
                        contentState: ["homeScore": 2]
                    )
                )
            }
            // An end in the other environment, and one APNs refused, end nothing here.
            try await end(.production, status: 200)
            try await end(.sandbox, status: 500)
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(2..<3), at: fixture.now) == 1)
            #expect(try await store.prunePendingStarts() == 0)

            try await end(.sandbox, status: 200)
            #expect(try await store.event(appID: app.id, id: event.id)?.state == .live)
            #expect(try await store.enqueueLateJoiners(appID: app.id, Self.keys(3..<5), at: fixture.now) == 0)
            #expect(try await store.prunePendingStarts() == 3)
            #expect(try await store.pendingStartCount(appID: app.id, eventID: event.id, environment: .sandbox) == 0)
        }
    }
}
