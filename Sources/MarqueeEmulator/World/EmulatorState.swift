import Foundation
import MarqueeCore
import Synchronization

/// The emulator's shared state: the world behind one lock with short critical sections, and the
/// installed faults behind another, with an atomic flag so the hot path skips the fault lock when
/// no fault is installed.
final class EmulatorState: Sendable {
    let configuration: APNSEmulatorConfiguration
    /// Reached only through `withWorld`, which delivers answered broadcasts first, or
    /// `withWorldBeforeDelivery`.
    private let world: Mutex<EmulatorWorld>
    /// What the played apps notice, for the app model; yielding never blocks.
    let appEvents: AsyncStream<AppModelEvent>
    let appEventSink: AsyncStream<AppModelEvent>.Continuation
    /// A wake for the `BroadcastCourier` each time a broadcast is answered
    /// before its delivery; wakes coalesce.
    let deliveryWakes: AsyncStream<Void>
    private let deliveryWakeSink: AsyncStream<Void>.Continuation
    private let faultPlan = Mutex(FaultPlan())
    private let hasFaults = Atomic<Bool>(false)

    init(configuration: APNSEmulatorConfiguration) {
        self.configuration = configuration
        self.world = Mutex(EmulatorWorld(configuration: configuration))
        (appEvents, appEventSink) = AsyncStream.makeStream(of: AppModelEvent.self)
        (deliveryWakes, deliveryWakeSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Runs `body` on the world under its lock, after delivering every broadcast answered before
    /// it (`EmulatorWorld.deliverAnsweredBroadcasts`): whatever reads or changes the world sees the
    /// deliveries done, in the order the broadcasts were answered. What the played apps notice
    /// meanwhile is handed to the app model outside the lock.
    func withWorld<Result: Sendable, Failure: Error>(
        _ body: (inout EmulatorWorld) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withWorld(deliveringFirstIf: { _ in true }, body)
    }

    /// `withWorld` for what needs the deliveries done only sometimes, as the world says under the
    /// lock: a device push needs them before it changes an activity (an update token's), not
    /// before it starts a new one or reaches a device.
    ///
    /// What is left to deliver is caught up on first a slice at a time (the courier's), letting go
    /// of the lock between slices, so that only the caller waits for the walk: delivered whole under
    /// one hold, a 66,000-subscriber channel's broadcast held the lock 0.2–0.3 s
    /// (`AnsweredBroadcast`), and every broadcast's admission and start behind it waited that long.
    /// What was answered after the last slice is still delivered under the hold that runs `body`,
    /// so `body` sees every delivery done.
    func withWorld<Result: Sendable, Failure: Error>(
        deliveringFirstIf needsDeliveries: (borrowing EmulatorWorld) -> Bool,
        _ body: (inout EmulatorWorld) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let configuration = configuration
        var slices = 0
        while slices < Self.catchUpSlices,
            world.withLock({ world in needsDeliveries(world) && world.hasUndeliveredBroadcasts })
        {
            _ = deliverAnsweredBroadcasts(activityLimit: BroadcastCourier.activitiesPerSlice)
            slices += 1
        }
        let (result, noticed) = world.withLock { world -> (Swift.Result<Result, Failure>, [AppModelEvent]) in
            let noticed =
                needsDeliveries(world) ? world.deliverAnsweredBroadcasts(configuration: configuration).appEvents : []
            do throws(Failure) {
                return (.success(try body(&world)), noticed)
            } catch {
                return (.failure(error), noticed)
            }
        }
        for event in noticed { appEventSink.yield(event) }
        return try result.get()
    }

    /// Runs `body` on the world under its lock as it is, answered broadcasts not delivered first:
    /// for what neither reads nor changes an activity or a channel's subscribers (a broadcast's
    /// checks and admission, a provider token's key, the counters), so that it does not wait for a
    /// delivery to a large channel.
    func withWorldBeforeDelivery<Result: Sendable, Failure: Error>(
        _ body: (inout EmulatorWorld) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try world.withLock { world throws(Failure) -> Result in try body(&world) }
    }

    /// At most this many slices are caught up on before a `withWorld` body (10 million activities):
    /// broadcasts answered faster than they are delivered cannot keep its caller waiting forever.
    private static let catchUpSlices = 10_000

    /// Delivers answered broadcasts to at most `activityLimit` activities under the world's lock
    /// (the `BroadcastCourier`'s slice); whether nothing is left to deliver.
    func deliverAnsweredBroadcasts(activityLimit: Int) -> Bool {
        let configuration = configuration
        let (noticed, finished) = world.withLock {
            $0.deliverAnsweredBroadcasts(configuration: configuration, activityLimit: activityLimit)
        }
        for event in noticed { appEventSink.yield(event) }
        return finished
    }

    /// Asks the courier to deliver what has been answered.
    func wakeCourier() {
        deliveryWakeSink.yield()
    }

    var now: Date { configuration.clock.now }

    func key(id: String) -> APNSEmulatorSigningKey? {
        withWorldBeforeDelivery { $0.keys[id] }
    }

    func install(_ fault: APNSEmulatorFault) {
        faultPlan.withLock { $0.install(fault) }
        hasFaults.store(true, ordering: .releasing)
    }

    func removeAllFaults() {
        faultPlan.withLock { $0.removeAll() }
        hasFaults.store(false, ordering: .releasing)
    }

    var faults: [APNSEmulatorFault] { faultPlan.withLock { $0.faults } }

    func faultActions(
        for endpoint: APNSEmulatorFault.Endpoint,
        in environment: APNSEnvironment
    ) -> [APNSEmulatorFault.Action] {
        guard hasFaults.load(ordering: .acquiring) else { return [] }
        return faultPlan.withLock { $0.select(for: endpoint, in: environment) }
    }

    func goAwayFault(for environment: APNSEnvironment) -> (afterStreams: Int, reason: APNSErrorReason)? {
        guard hasFaults.load(ordering: .acquiring) else { return nil }
        return faultPlan.withLock { $0.goAway(for: environment) }
    }
}
