import Foundation
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Synchronization
import Testing

@testable import MarqueeEngine

/// Single devices' registrations written together while the store is busy, over the real SQLite
/// store: each answered with its own row as written, and one registration's failure its own. The
/// first statement is held open by an explicit pause point, so that what arrives meanwhile queues
/// whatever the machine's speed.
@Suite("Single registrations share a statement while the store is busy")
struct RegistrationCoalescerTests {
    /// The statements the coalescer asked for, in order, and a pause point holding the first open.
    final class Recorder: Sendable {
        let statements = Mutex<[[PushToStartRegistration]]>([])
        let opened: AsyncStream<Void>
        let open: AsyncStream<Void>.Continuation
        /// A statement carrying this token fails whole, as a statement fails for one bad row.
        let failing: String?

        init(failing: String? = nil) {
            (opened, open) = AsyncStream<Void>.makeStream()
            self.failing = failing
        }

        func write(
            _ harness: EngineHarness,
            _ appID: AppID,
            _ registrations: [PushToStartRegistration]
        ) async throws -> [PushToStartToken] {
            if statements.withLock({
                $0.append(registrations)
                return $0.count
            }) == 1 {
                for await _ in opened { break }
            }
            if let failing, registrations.contains(where: { $0.token == failing }) {
                throw TestSetupError("the statement carrying \(failing) failed")
            }
            return try await harness.store.registerPushToStartTokens(
                appID: appID,
                registrations,
                at: harness.clock.now,
                returningTokens: true
            ).tokens
        }
    }

    func registration(_ number: Int, device: String? = nil) -> PushToStartRegistration {
        PushToStartRegistration(
            environment: .sandbox,
            attributesType: EngineHarness.attributesType,
            token: EngineHarness.token(number),
            deviceID: device,
            iosVersion: "18.2"
        )
    }

    static func answer(
        _ work: () async throws -> PushToStartToken?
    ) async -> Result<PushToStartToken?, any Error> {
        do { return .success(try await work()) } catch { return .failure(error) }
    }

    /// What a run of `registerWhileBusy` saw.
    struct Run {
        let harness: EngineHarness
        /// Each registration's answer, `first`'s then the others' in their order.
        let answers: [Result<PushToStartToken?, any Error>]
        /// The statements the coalescer wrote, in order.
        let statements: [[PushToStartRegistration]]
    }

    /// Over a fresh harness and a coalescer of one writer: registers `first` and waits until its
    /// statement is held open, then the others at once, until all of them wait; then lets the first
    /// statement go. A statement carrying the token `failing` fails whole.
    func registerWhileBusy(
        first: PushToStartRegistration,
        others: [PushToStartRegistration],
        failing: String? = nil
    ) async throws -> Run {
        let harness = try await EngineHarness()
        let recorder = Recorder(failing: failing)
        let coalescer = RegistrationCoalescer(maximumWriters: 1, maximumBatch: 100) { appID, registrations in
            try await recorder.write(harness, appID, registrations)
        }
        let appID = harness.app.id
        async let firstAnswer = Self.answer { try await coalescer.register(appID: appID, first) }
        try await waitUntil("the first statement open") { recorder.statements.withLock { $0.count } == 1 }
        let answers = await withTaskGroup(of: (Int, Result<PushToStartToken?, any Error>).self) { group in
            for (index, registration) in others.enumerated() {
                group.addTask {
                    (index, await Self.answer { try await coalescer.register(appID: appID, registration) })
                }
            }
            try? await waitUntil("\(others.count) registrations waiting") { coalescer.queuedCount == others.count }
            recorder.open.yield()
            var answers: [Result<PushToStartToken?, any Error>?] = Array(repeating: nil, count: others.count)
            for await (index, answer) in group { answers[index] = answer }
            return answers.compactMap { $0 }
        }
        #expect(coalescer.queuedCount == 0)
        return Run(
            harness: harness,
            answers: [await firstAnswer] + answers,
            statements: recorder.statements.withLock { $0 }
        )
    }

    @Test("registrations arriving while the one writer is busy are written in one statement, each answered its own row")
    func busyWriterBatches() async throws {
        let run = try await registerWhileBusy(
            first: registration(0),
            others: (1...10).map { registration($0, device: "device-\($0)") }
        )
        #expect(run.statements.map(\.count) == [1, 10])
        for (number, answer) in run.answers.enumerated() {
            let row = try #require(try answer.get())
            #expect(row.token == EngineHarness.token(number))
            #expect(row == (try await run.harness.storedToken(EngineHarness.token(number))))
        }
        await run.harness.close()
    }

    @Test("one device's two registrations take two statements, and each answers the row its own wrote")
    func oneDeviceTwiceApart() async throws {
        let run = try await registerWhileBusy(
            first: registration(0),
            others: [registration(1, device: "phone"), registration(2), registration(3, device: "phone")]
        )
        // The three arrive in any order: whichever of the device's two is first shares the second
        // statement with token 2, the other waits for a third.
        let statements = run.statements.map { Set($0.map(\.token)) }
        #expect(statements.count == 3)
        #expect(statements.first == [EngineHarness.token(0)])
        #expect(!statements.contains { $0.isSuperset(of: [EngineHarness.token(1), EngineHarness.token(3)]) })
        let rotatedFrom = try #require(try run.answers[1].get())
        let rotatedTo = try #require(try run.answers[3].get())
        #expect(rotatedFrom.token == EngineHarness.token(1))
        #expect(rotatedTo.token == EngineHarness.token(3))
        #expect(rotatedTo.rowID == rotatedFrom.rowID, "the device kept its row when its token rotated")
        await run.harness.close()
    }

    @Test("a statement that fails is written again one registration at a time: only the failing one fails")
    func failedBatchRetriedAlone() async throws {
        let run = try await registerWhileBusy(
            first: registration(0),
            others: [registration(1), registration(2), registration(3)],
            failing: EngineHarness.token(2)
        )
        #expect(run.statements.count == 5, "the first, the batch of 3, and each of them again")
        #expect(try run.answers[1].get()?.token == EngineHarness.token(1))
        #expect(throws: TestSetupError.self) { try run.answers[2].get() }
        #expect(try run.answers[3].get()?.token == EngineHarness.token(3))
        await run.harness.close()
    }
}
