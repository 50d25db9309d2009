import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

@Suite("Jobs")
struct JobContractTests {
    @Test("two workers leasing from one queue never hold the same job", arguments: Backend.allCases)
    func disjointLeases(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            for index in 0..<40 {
                try await fixture.store.enqueueJob(
                    Job(
                        appID: app.id,
                        kind: .startFanOut,
                        arguments: ["shard": .integer(Int64(index))],
                        dueAt: fixture.now.addingTimeInterval(-Double(index)),
                        createdAt: fixture.now
                    )
                )
            }
            let store = fixture.store
            let now = fixture.now
            let byWorker = try await withThrowingTaskGroup(of: (String, [JobID]).self) { group in
                for worker in ["replica-a", "replica-b"] {
                    group.addTask {
                        var leased: [JobID] = []
                        while true {
                            let jobs = try await store.leaseJobs(
                                owner: worker,
                                kinds: [.startFanOut],
                                now: now,
                                leaseDuration: .seconds(30),
                                limit: 3
                            )
                            if jobs.isEmpty { return (worker, leased) }
                            #expect(jobs.allSatisfy { $0.lease?.owner == worker && $0.state == .running })
                            leased += jobs.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: [String: [JobID]]()) { $0[$1.0] = $1.1 }
            }
            let a = Set(byWorker["replica-a"] ?? [])
            let b = Set(byWorker["replica-b"] ?? [])
            #expect(a.isDisjoint(with: b))
            #expect(a.count + b.count == 40)
        }
    }

    @Test("only due jobs of the asked kinds are leased, oldest due first", arguments: Backend.allCases)
    func dueAndKind(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let later = Job(
                appID: app.id,
                kind: .broadcast,
                dueAt: fixture.now.addingTimeInterval(60),
                createdAt: fixture.now
            )
            let older = Job(
                appID: app.id,
                kind: .broadcast,
                dueAt: fixture.now.addingTimeInterval(-20),
                createdAt: fixture.now
            )
            let newer = Job(
                appID: app.id,
                kind: .broadcast,
                dueAt: fixture.now.addingTimeInterval(-10),
                createdAt: fixture.now
            )
            let otherKind = Job(appID: app.id, kind: .deleteChannel, dueAt: fixture.now, createdAt: fixture.now)
            for job in [later, newer, older, otherKind] { try await fixture.store.enqueueJob(job) }

            let leased = try await fixture.store.leaseJobs(
                owner: "w",
                kinds: [.broadcast],
                now: fixture.now,
                leaseDuration: .seconds(30),
                limit: 10
            )
            #expect(leased.map(\.id) == [older.id, newer.id])
            #expect(leased.first?.attempts == 1)
            let any = try await fixture.store.leaseJobs(
                owner: "w",
                kinds: nil,
                now: fixture.now,
                leaseDuration: .seconds(30),
                limit: 10
            )
            #expect(any.map(\.id) == [otherKind.id])
        }
    }

    @Test(
        "an expired lease passes to another worker, and the first one's completion is refused",
        arguments: Backend.allCases
    )
    func expiredLease(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let job = Job(appID: app.id, kind: .startFanOut, dueAt: fixture.now, createdAt: fixture.now)
            try await fixture.store.enqueueJob(job)
            _ = try await fixture.store.leaseJobs(
                owner: "a",
                kinds: nil,
                now: fixture.now,
                leaseDuration: .seconds(30),
                limit: 1
            )
            #expect(
                try await fixture.store.leaseJobs(
                    owner: "b",
                    kinds: nil,
                    now: fixture.now,
                    leaseDuration: .seconds(30),
                    limit: 1
                ).isEmpty
            )
            #expect(
                try await fixture.store.renewJobLease(
                    id: job.id,
                    owner: "a",
                    now: fixture.now,
                    leaseDuration: .seconds(30)
                )
            )

            fixture.clock.advance(by: 31)
            let takenOver = try await fixture.store.leaseJobs(
                owner: "b",
                kinds: nil,
                now: fixture.now,
                leaseDuration: .seconds(30),
                limit: 1
            )
            #expect(takenOver.map(\.id) == [job.id])
            #expect(takenOver.first?.attempts == 2)
            #expect(
                try await !fixture.store.renewJobLease(
                    id: job.id,
                    owner: "a",
                    now: fixture.now,
                    leaseDuration: .seconds(30)
                )
            )
            await #expect(throws: StoreError.leaseLost(job.id)) {
                try await fixture.store.completeJob(id: job.id, owner: "a", at: fixture.now)
            }
            try await fixture.store.completeJob(id: job.id, owner: "b", at: fixture.now)
            let done = try await fixture.store.job(appID: app.id, id: job.id)
            #expect(done?.state == .succeeded)
            #expect(done?.lease == nil)
        }
    }

    @Test(
        "a failed job is retried at its retry time or fails for good; a cancelled one is never leased",
        arguments: Backend.allCases
    )
    func failAndCancel(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let job = Job(
                appID: app.id,
                kind: .createChannel,
                arguments: ["environment": "sandbox", "attempt": 2, "event": ["id": "e1", "title": "Final"]],
                dueAt: fixture.now,
                createdAt: fixture.now
            )
            try await fixture.store.enqueueJob(job)
            _ = try await fixture.store.leaseJobs(
                owner: "w",
                kinds: nil,
                now: fixture.now,
                leaseDuration: .seconds(30),
                limit: 1
            )
            let retryAt = fixture.now.addingTimeInterval(10)
            try await fixture.store.failJob(
                id: job.id,
                owner: "w",
                error: "APNs 503",
                retryAt: retryAt,
                at: fixture.now
            )
            let retried = try #require(try await fixture.store.job(appID: app.id, id: job.id))
            #expect(retried.state == .pending)
            #expect(retried.dueAt == retryAt)
            #expect(retried.lastError == "APNs 503")
            // Arguments come back as Core's JSON decoding reads the stored text (object keys sorted).
            let arguments: JSONValue = [
                "environment": "sandbox", "attempt": 2, "event": ["id": "e1", "title": "Final"],
            ]
            #expect(
                retried.arguments == (try JSONDecoder().decode(JSONValue.self, from: Data(arguments.jsonString.utf8)))
            )
            #expect(
                try await fixture.store.leaseJobs(
                    owner: "w",
                    kinds: nil,
                    now: fixture.now,
                    leaseDuration: .seconds(30),
                    limit: 1
                ).isEmpty
            )

            fixture.clock.advance(by: 10)
            _ = try await fixture.store.leaseJobs(
                owner: "w",
                kinds: nil,
                now: fixture.now,
                leaseDuration: .seconds(30),
                limit: 1
            )
            try await fixture.store.failJob(id: job.id, owner: "w", error: "BadTopic", retryAt: nil, at: fixture.now)
            #expect(try await fixture.store.job(appID: app.id, id: job.id)?.state == .failed)

            let other = Job(appID: app.id, kind: .endEvent, dueAt: fixture.now, createdAt: fixture.now)
            try await fixture.store.enqueueJob(other)
            let stranger = try await fixture.makeApp("Other")
            #expect(try await !fixture.store.cancelJob(appID: stranger.id, id: other.id, at: fixture.now))
            #expect(try await fixture.store.cancelJob(appID: app.id, id: other.id, at: fixture.now))
            #expect(
                try await fixture.store.leaseJobs(
                    owner: "w",
                    kinds: nil,
                    now: fixture.now,
                    leaseDuration: .seconds(30),
                    limit: 5
                ).isEmpty
            )
        }
    }
}
