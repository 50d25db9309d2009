import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

/// A worker's writes to a job are fenced by its lease: by owner, and by the lease's expiry, so that a
/// replica slowed past its lease cannot commit outcomes, move a checkpoint or reserve tokens, even
/// before another replica has taken the job over.
@Suite("Lease fencing")
struct LeaseFencingContractTests {
    @Test("a commit at or after the lease's expiry is refused and leaves nothing behind", arguments: Backend.allCases)
    func commitAfterExpiry(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            // Leased by "worker" for 60 s at fixture.now.
            let scene = try await DeliveryContractTests.scene(fixture)
            let expiry = fixture.now.addingTimeInterval(60)
            let late = DeliveryContractTests.batch(scene, scene.tokens[0..<3], at: expiry)
            await #expect(throws: StoreError.leaseLost(scene.job.id)) {
                try await fixture.store.commitDeliveryBatch(late, at: expiry)
            }
            try await DeliveryContractTests.expectNothingWritten(fixture, scene)

            // Nobody took the job: the lapsed lease cannot be renewed either.
            #expect(
                try await !fixture.store.renewJobLease(
                    id: scene.job.id,
                    owner: "worker",
                    now: expiry,
                    leaseDuration: .seconds(60)
                )
            )

            // Just before the expiry, the same batch commits.
            let inTime = expiry.addingTimeInterval(-0.001)
            try await fixture.store.commitDeliveryBatch(
                DeliveryContractTests.batch(scene, scene.tokens[0..<3], at: inTime),
                at: inTime
            )
            #expect(
                try await fixture.store.job(appID: scene.app.id, id: scene.job.id)?.checkpoint
                    == String(scene.tokens[2].rowID)
            )
        }
    }

    @Test(
        "a reservation is written by the lease's owner while it lasts, read back with the job, and cleared",
        arguments: Backend.allCases
    )
    func reservation(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await DeliveryContractTests.scene(fixture)
            let id = scene.job.id
            #expect(try await fixture.store.job(appID: scene.app.id, id: id)?.reservedThrough == nil)

            try await fixture.store.reserveJobTokens(id: id, owner: "worker", through: 1_000, at: fixture.now)
            #expect(try await fixture.store.job(appID: scene.app.id, id: id)?.reservedThrough == 1_000)

            // Another owner, or the owner after its lease expired: refused, the reservation kept.
            await #expect(throws: StoreError.leaseLost(id)) {
                try await fixture.store.reserveJobTokens(id: id, owner: "other", through: 2_000, at: fixture.now)
            }
            await #expect(throws: StoreError.leaseLost(id)) {
                try await fixture.store.reserveJobTokens(
                    id: id,
                    owner: "worker",
                    through: 2_000,
                    at: fixture.now.addingTimeInterval(60)
                )
            }
            #expect(try await fixture.store.job(appID: scene.app.id, id: id)?.reservedThrough == 1_000)

            // A worker taking the job over after the expiry sees the reservation: the crash window.
            let takenOver = try await fixture.store.leaseJobs(
                owner: "next",
                kinds: nil,
                now: fixture.now.addingTimeInterval(60),
                leaseDuration: .seconds(60),
                limit: 1
            )
            #expect(takenOver.map(\.reservedThrough) == [1_000])
            #expect(takenOver.first?.attempts == 2)

            try await fixture.store.reserveJobTokens(
                id: id,
                owner: "next",
                through: nil,
                at: fixture.now.addingTimeInterval(61)
            )
            #expect(try await fixture.store.job(appID: scene.app.id, id: id)?.reservedThrough == nil)
        }
    }
}
