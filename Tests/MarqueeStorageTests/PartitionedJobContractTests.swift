import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

/// A fan-out split into partition jobs: enqueued together, listed as one, cancelled as one,
/// finished by whichever partition finishes last, each reading its own part of the audience.
@Suite("Partitioned jobs")
struct PartitionedJobContractTests {
    static func fanOut(_ fixture: StoreFixture, app: App, parts: Int) -> (parent: Job, parts: [Job]) {
        let parent = Job(
            appID: app.id,
            kind: .startFanOut,
            dueAt: fixture.now,
            progress: JobProgress(total: 10),
            createdAt: fixture.now
        )
        let children = (0..<parts).map { _ in
            Job(
                appID: app.id,
                kind: .startFanOutPartition,
                parentID: parent.id,
                dueAt: fixture.now,
                createdAt: fixture.now
            )
        }
        return (parent, children)
    }

    @Test("partitions are enqueued with their fan-out, or nothing is", arguments: Backend.allCases)
    func enqueuedTogether(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let (parent, parts) = Self.fanOut(fixture, app: app, parts: 3)
            try await fixture.store.enqueueJobs([parent] + parts)
            #expect(
                try await fixture.store.childJobs(appID: app.id, parentID: parent.id).map(\.id).sorted {
                    $0.uuid.uuidString < $1.uuid.uuidString
                }
                    == parts.map(\.id).sorted { $0.uuid.uuidString < $1.uuid.uuidString }
            )
            #expect(
                try await fixture.store.childJobs(appID: app.id, parentID: parent.id).allSatisfy {
                    $0.parentID == parent.id
                }
            )
            // The app's job list shows the fan-out, not its partitions.
            #expect(
                try await fixture.store.jobs(appID: app.id, kinds: nil, before: nil, limit: 10).map(\.id) == [parent.id]
            )

            let (orphan, orphanParts) = Self.fanOut(fixture, app: app, parts: 2)
            let stranger = Job(
                appID: AppID(),
                kind: .startFanOutPartition,
                parentID: orphan.id,
                dueAt: fixture.now,
                createdAt: fixture.now
            )
            await #expect(throws: StoreError.self) {
                try await fixture.store.enqueueJobs([orphan] + orphanParts + [stranger])
            }
            #expect(try await fixture.store.job(appID: app.id, id: orphan.id) == nil)
            #expect(try await fixture.store.childJobs(appID: app.id, parentID: orphan.id).isEmpty)
        }
    }

    @Test(
        "the last partition to finish finishes the fan-out, once; a failed partition fails it",
        arguments: Backend.allCases
    )
    func finishedByTheLastPartition(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let (parent, parts) = Self.fanOut(fixture, app: app, parts: 2)
            try await fixture.store.enqueueJobs([parent] + parts)
            let leased = try await fixture.store.leaseJobs(
                owner: "a",
                kinds: [.startFanOutPartition],
                now: fixture.now,
                leaseDuration: .seconds(30),
                limit: 10
            )
            #expect(Set(leased.map(\.id)) == Set(parts.map(\.id)))

            try await fixture.store.completeJob(id: parts[0].id, owner: "a", at: fixture.now)
            #expect(try await fixture.store.finishParentJob(id: parent.id, at: fixture.now) == nil)
            try await fixture.store.completeJob(id: parts[1].id, owner: "a", at: fixture.now)
            #expect(try await fixture.store.finishParentJob(id: parent.id, at: fixture.now) == .succeeded)
            #expect(try await fixture.store.finishParentJob(id: parent.id, at: fixture.now) == nil)
            #expect(try await fixture.store.job(appID: app.id, id: parent.id)?.state == .succeeded)

            let (second, secondParts) = Self.fanOut(fixture, app: app, parts: 2)
            try await fixture.store.enqueueJobs([second] + secondParts)
            _ = try await fixture.store.leaseJobs(
                owner: "b",
                kinds: [.startFanOutPartition],
                now: fixture.now,
                leaseDuration: .seconds(30),
                limit: 10
            )
            try await fixture.store.completeJob(id: secondParts[0].id, owner: "b", at: fixture.now)
            try await fixture.store.failJob(
                id: secondParts[1].id,
                owner: "b",
                error: "no",
                retryAt: nil,
                at: fixture.now
            )
            #expect(try await fixture.store.finishParentJob(id: second.id, at: fixture.now) == .failed)
        }
    }

    @Test("the fan-out is never leased; cancelling it cancels its partitions", arguments: Backend.allCases)
    func cancelledAsOne(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let (parent, parts) = Self.fanOut(fixture, app: app, parts: 3)
            try await fixture.store.enqueueJobs([parent] + parts)
            let leased = try await fixture.store.leaseJobs(
                owner: "a",
                kinds: [.startFanOutPartition],
                now: fixture.now,
                leaseDuration: .seconds(30),
                limit: 1
            )
            let running = try #require(leased.first)

            #expect(try await fixture.store.cancelJob(appID: app.id, id: parent.id, at: fixture.now))
            #expect(
                try await fixture.store.childJobs(appID: app.id, parentID: parent.id).allSatisfy {
                    $0.state == .cancelled
                }
            )
            #expect(
                try await fixture.store.renewJobLease(
                    id: running.id,
                    owner: "a",
                    now: fixture.now,
                    leaseDuration: .seconds(30)
                ) == false
            )
            #expect(
                try await fixture.store.leaseJobs(
                    owner: "a",
                    kinds: nil,
                    now: fixture.now,
                    leaseDuration: .seconds(30),
                    limit: 10
                ).isEmpty
            )
            // Cancelling a finished job changes nothing.
            #expect(try await fixture.store.cancelJob(appID: app.id, id: parent.id, at: fixture.now) == false)
        }
    }

    @Test(
        "a fan-out whose partitions have all finished is not cancelled before its row is finished",
        arguments: Backend.allCases
    )
    func finishedPartitionsAreNotCancelled(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let (parent, parts) = Self.fanOut(fixture, app: app, parts: 2)
            try await fixture.store.enqueueJobs([parent] + parts)
            _ = try await fixture.store.leaseJobs(
                owner: "a",
                kinds: [.startFanOutPartition],
                now: fixture.now,
                leaseDuration: .seconds(30),
                limit: 10
            )
            for part in parts { try await fixture.store.completeJob(id: part.id, owner: "a", at: fixture.now) }

            // The last partition's worker has not finished the fan-out's row yet: the API already
            // shows it succeeded, so a cancel now is a cancel of a finished job.
            #expect(try await fixture.store.cancelJob(appID: app.id, id: parent.id, at: fixture.now) == false)
            #expect(try await fixture.store.job(appID: app.id, id: parent.id)?.state != .cancelled)
            #expect(
                try await fixture.store.childJobs(appID: app.id, parentID: parent.id).allSatisfy {
                    $0.state == .succeeded
                }
            )
            #expect(try await fixture.store.finishParentJob(id: parent.id, at: fixture.now) == .succeeded)

            // A job without partitions is cancelled as before.
            let single = Job(appID: app.id, kind: .startFanOut, dueAt: fixture.now, createdAt: fixture.now)
            try await fixture.store.enqueueJobs([single])
            #expect(try await fixture.store.cancelJob(appID: app.id, id: single.id, at: fixture.now))
        }
    }

    @Test("an audience's partitions are disjoint ranges of row IDs and together the whole", arguments: Backend.allCases)
    func audiencePartitions(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            _ = try await fixture.store.upsertPushToStartTokens(
                appID: app.id,
                (0..<23).map { TokenContractTests.registration($0) },
                at: fixture.now
            )
            let everyone = AudienceQuery(appID: app.id, environment: .sandbox, attributesType: "MatchAttributes")
            let extent = try await fixture.store.audienceExtent(everyone)
            #expect(extent.count == 23)
            let rowIDs = try #require(extent.rowIDs)
            var seen: [Int64] = []
            for partition in AudiencePartition.split(rowIDs: rowIDs, into: 4) {
                var part = everyone
                part.partition = partition
                let rows = try await fixture.store.audiencePage(part, after: 0, limit: 100).map(\.rowID)
                #expect(rows.allSatisfy(partition.contains))
                #expect((5...6).contains(rows.count))
                #expect(try await fixture.store.audienceExtent(part).count == Int64(rows.count))
                seen += rows
            }
            #expect(seen == (try await fixture.store.audiencePage(everyone, after: 0, limit: 100).map(\.rowID)))

            // A token registered after the split belongs to the last part, open above.
            _ = try await fixture.store.upsertPushToStartTokens(
                appID: app.id,
                [TokenContractTests.registration(23)],
                at: fixture.now
            )
            var last = everyone
            last.partition = AudiencePartition.split(rowIDs: rowIDs, into: 4).last
            #expect(try await fixture.store.audienceExtent(last).count == 7)
        }
    }

    @Test("an empty audience has no row IDs", arguments: Backend.allCases)
    func emptyAudience(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let nobody = AudienceQuery(appID: app.id, environment: .sandbox, attributesType: "MatchAttributes")
            #expect(try await fixture.store.audienceExtent(nobody) == AudienceExtent(count: 0, rowIDs: nil))
        }
    }
}
