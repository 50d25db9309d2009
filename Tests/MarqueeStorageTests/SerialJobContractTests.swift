import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

/// Jobs with one serial key run one group after another (an event's starts): the parts of one
/// group side by side, the groups in order, a group that has begun before any that has not.
@Suite("Serial jobs")
struct SerialJobContractTests {
    static let key = JobSerialKey.start(of: EventID())

    /// A start's parent and `parts` parts with `key`, created at `at`.
    static func start(_ fixture: StoreFixture, app: App, parts: Int, key: String? = key, at: Date? = nil) -> [Job] {
        let created = at ?? fixture.now
        let parent = Job(appID: app.id, kind: .startFanOut, dueAt: created, createdAt: created)
        return [parent]
            + (0..<parts).map { _ in
                Job(
                    appID: app.id,
                    kind: .startFanOutPartition,
                    parentID: parent.id,
                    dueAt: created,
                    serialKey: key,
                    createdAt: created
                )
            }
    }

    static func lease(
        _ fixture: StoreFixture,
        owner: String = "w",
        at: Date? = nil,
        limit: Int = 10
    ) async throws -> Set<JobID> {
        Set(
            try await fixture.store.leaseJobs(
                owner: owner,
                kinds: [.startFanOutPartition],
                now: at ?? fixture.now,
                leaseDuration: .seconds(30),
                limit: limit
            ).map(\.id)
        )
    }

    static func partIDs(_ jobs: [Job]) -> Set<JobID> { Set(jobs.dropFirst().map(\.id)) }

    @Test("the key is the job's, read back as written", arguments: Backend.allCases)
    func keyIsStored(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let jobs = Self.start(fixture, app: app, parts: 1)
            try await fixture.store.enqueueJobs(jobs)
            #expect(
                try await fixture.store.childJobs(appID: app.id, parentID: jobs[0].id).map(\.serialKey) == [Self.key]
            )
            #expect(try await fixture.store.job(appID: app.id, id: jobs[0].id)?.serialKey == nil)
        }
    }

    @Test("a second start of the event waits until every part of the first has finished", arguments: Backend.allCases)
    func secondWaitsForFirst(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let first = Self.start(fixture, app: app, parts: 2)
            let second = Self.start(fixture, app: app, parts: 2, at: fixture.now.addingTimeInterval(1))
            try await fixture.store.enqueueJobs(first)
            try await fixture.store.enqueueJobs(second)
            let later = fixture.now.addingTimeInterval(2)

            #expect(
                try await Self.lease(fixture, at: later) == Self.partIDs(first),
                "the first start's parts run side by side"
            )
            #expect(try await Self.lease(fixture, at: later).isEmpty, "the second waits while a part of the first runs")
            let firstParts = Array(Self.partIDs(first))
            try await fixture.store.completeJob(id: firstParts[0], owner: "w", at: later)
            #expect(try await Self.lease(fixture, at: later).isEmpty)
            try await fixture.store.completeJob(id: firstParts[1], owner: "w", at: later)
            #expect(try await Self.lease(fixture, at: later) == Self.partIDs(second))
        }
    }

    @Test(
        "the older start goes first even when both are due at one lease; other keys and keyless jobs never wait",
        arguments: Backend.allCases
    )
    func olderFirst(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let older = Self.start(fixture, app: app, parts: 2)
            let newer = Self.start(fixture, app: app, parts: 2, at: fixture.now.addingTimeInterval(1))
            let otherEvent = Self.start(
                fixture,
                app: app,
                parts: 1,
                key: JobSerialKey.start(of: EventID()),
                at: fixture.now.addingTimeInterval(1)
            )
            let keyless = Self.start(fixture, app: app, parts: 1, key: nil, at: fixture.now.addingTimeInterval(1))
            // Enqueued newest first: the order of creation decides, not of insertion.
            for jobs in [keyless, otherEvent, newer, older] { try await fixture.store.enqueueJobs(jobs) }
            let leased = try await Self.lease(fixture, at: fixture.now.addingTimeInterval(2))
            #expect(leased == Self.partIDs(older).union(Self.partIDs(otherEvent)).union(Self.partIDs(keyless)))
        }
    }

    @Test(
        "a start that has begun and waits to retry keeps the key; its lapsed run goes before a newer start",
        arguments: Backend.allCases
    )
    func begunGoesFirst(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let first = Self.start(fixture, app: app, parts: 1)
            try await fixture.store.enqueueJobs(first)
            let part = try #require(Self.partIDs(first).first)
            #expect(try await Self.lease(fixture) == [part])
            // It fails and retries in a minute: the uncertain window it may leave is its own to settle.
            try await fixture.store.failJob(
                id: part,
                owner: "w",
                error: "database",
                retryAt: fixture.now.addingTimeInterval(60),
                at: fixture.now
            )
            let second = Self.start(fixture, app: app, parts: 1, at: fixture.now.addingTimeInterval(1))
            try await fixture.store.enqueueJobs(second)
            #expect(try await Self.lease(fixture, at: fixture.now.addingTimeInterval(2)).isEmpty)
            #expect(try await Self.lease(fixture, at: fixture.now.addingTimeInterval(61)) == [part])

            // Its worker dies: while the lease lasts nothing runs; once it lapses, the first again.
            let crashed = fixture.now.addingTimeInterval(61)
            #expect(try await Self.lease(fixture, at: crashed.addingTimeInterval(10)).isEmpty)
            #expect(try await Self.lease(fixture, owner: "v", at: crashed.addingTimeInterval(31)) == [part])
            try await fixture.store.completeJob(id: part, owner: "v", at: crashed.addingTimeInterval(32))
            #expect(try await Self.lease(fixture, at: crashed.addingTimeInterval(33)) == Self.partIDs(second))
        }
    }

    @Test(
        "a start due later does not hold up one due now; once begun, the later one waits for it",
        arguments: Backend.allCases
    )
    func dueOrder(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            var scheduled = Self.start(fixture, app: app, parts: 1)
            for index in scheduled.indices { scheduled[index].dueAt = fixture.now.addingTimeInterval(600) }
            let now = Self.start(fixture, app: app, parts: 1, at: fixture.now.addingTimeInterval(1))
            try await fixture.store.enqueueJobs(scheduled)
            try await fixture.store.enqueueJobs(now)
            #expect(try await Self.lease(fixture, at: fixture.now.addingTimeInterval(2)) == Self.partIDs(now))
            #expect(try await Self.lease(fixture, at: fixture.now.addingTimeInterval(20)).isEmpty)
            // Due now, the scheduled start still waits for the begun one, whose lapsed run is leased again.
            #expect(try await Self.lease(fixture, at: fixture.now.addingTimeInterval(601)) == Self.partIDs(now))
        }
    }
}
