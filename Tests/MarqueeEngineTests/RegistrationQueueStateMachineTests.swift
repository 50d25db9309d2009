import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// Who writes which single registrations, and with whom: the decisions of `RegistrationCoalescer`
/// with no store and no waiting.
@Suite("Single registrations: who writes what, together")
struct RegistrationQueueStateMachineTests {
    typealias Machine = RegistrationQueueStateMachine<Int>

    static let appA = AppID()
    static let appB = AppID()

    /// Entry `waiter` of app `app`, registering token `token` for device `device`.
    static func entry(_ waiter: Int, app: AppID = appA, token: Int? = nil, device: String? = nil) -> Machine.Entry {
        Machine.Entry(
            appID: app,
            registration: PushToStartRegistration(
                environment: .sandbox,
                attributesType: "MatchAttributes",
                token: String(format: "%064x", token ?? waiter),
                deviceID: device
            ),
            waiter: waiter
        )
    }

    /// The machine driven as the coalescer drives it, each step answering what it decided.
    final class Writers {
        var machine: Machine
        init(maximumWriters: Int, maximumBatch: Int) {
            machine = Machine(maximumWriters: maximumWriters, maximumBatch: maximumBatch)
        }
        /// Whether an arrival that has not queued takes a writer.
        func start() -> Bool { machine.startWriting() }
        /// The batch an arrival writes at once (itself), or nil when it queued.
        func arrive(_ entry: Machine.Entry) -> [Int]? { machine.wait(entry)?.map(\.waiter) }
        /// The waiters of the batch a finishing writer hands its slot to; nil when it frees it.
        func finish() -> [Int]? { machine.finishWriting()?.map(\.waiter) }
        var writing: Int { machine.writing }
        var queued: [Int] { machine.queued.map(\.waiter) }
    }

    @Test("while a writer is free a registration takes it and is written at once, alone")
    func freeWriterWritesAtOnce() {
        let machine = Writers(maximumWriters: 2, maximumBatch: 100)
        #expect(machine.start())
        #expect(machine.start())
        #expect(machine.writing == 2)
        #expect(!machine.start())
        #expect(machine.finish() == nil)
        #expect(machine.writing == 1)
        #expect(machine.arrive(Self.entry(1)) == [1])
        #expect(machine.writing == 2)
        #expect(machine.queued.isEmpty)
    }

    @Test("registrations arriving while every writer is busy are the next batch, and the slot passes to it")
    func busyWritersBatch() {
        let machine = Writers(maximumWriters: 1, maximumBatch: 100)
        #expect(machine.start())
        for waiter in 1...5 { #expect(machine.arrive(Self.entry(waiter)) == nil) }
        #expect(!machine.start(), "a new arrival queues behind the waiting ones")
        #expect(machine.finish() == [1, 2, 3, 4, 5])
        #expect(machine.writing == 1, "the finished writer's slot is the batch's")
        #expect(machine.queued.isEmpty)
        #expect(machine.finish() == nil)
        #expect(machine.writing == 0)
    }

    @Test("two registrations of one token, or of one device, never share a statement: the second waits its turn")
    func sameTokenOrDeviceApart() {
        let machine = Writers(maximumWriters: 1, maximumBatch: 100)
        #expect(machine.start())
        _ = machine.arrive(Self.entry(1, token: 7))
        _ = machine.arrive(Self.entry(2, token: 7))
        _ = machine.arrive(Self.entry(3, token: 8, device: "phone"))
        _ = machine.arrive(Self.entry(4, token: 9, device: "phone"))
        _ = machine.arrive(Self.entry(5, token: 10))
        #expect(machine.finish() == [1, 3, 5])
        #expect(machine.queued == [2, 4])
        #expect(machine.finish() == [2, 4])
        #expect(machine.finish() == nil)
    }

    @Test("a batch is one app's, the oldest waiting; the other app's keep their order for the next")
    func oneAppPerBatch() {
        let machine = Writers(maximumWriters: 1, maximumBatch: 100)
        #expect(machine.start())
        _ = machine.arrive(Self.entry(1, app: Self.appB))
        _ = machine.arrive(Self.entry(2, app: Self.appA))
        _ = machine.arrive(Self.entry(3, app: Self.appB))
        _ = machine.arrive(Self.entry(4, app: Self.appA))
        #expect(machine.finish() == [1, 3])
        #expect(machine.finish() == [2, 4])
    }

    @Test("a batch carries at most maximumBatch registrations")
    func batchBound() {
        let machine = Writers(maximumWriters: 1, maximumBatch: 3)
        #expect(machine.start())
        for waiter in 1...7 { _ = machine.arrive(Self.entry(waiter)) }
        #expect(machine.finish() == [1, 2, 3])
        #expect(machine.finish() == [4, 5, 6])
        #expect(machine.finish() == [7])
        #expect(machine.finish() == nil)
        #expect(machine.writing == 0)
    }
}
