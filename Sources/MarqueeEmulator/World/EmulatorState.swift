import Foundation
import MarqueeCore
import Synchronization

/// The emulator's shared state: the world behind one lock with short critical sections, and the
/// installed faults behind another, with an atomic flag so the hot path skips the fault lock when
/// no fault is installed.
final class EmulatorState: Sendable {
    let configuration: APNSEmulatorConfiguration
    let world: Mutex<EmulatorWorld>
    /// What the played apps notice, for the app model; yielding never blocks.
    let appEvents: AsyncStream<AppModelEvent>
    let appEventSink: AsyncStream<AppModelEvent>.Continuation
    private let faultPlan = Mutex(FaultPlan())
    private let hasFaults = Atomic<Bool>(false)

    init(configuration: APNSEmulatorConfiguration) {
        self.configuration = configuration
        self.world = Mutex(EmulatorWorld(configuration: configuration))
        (appEvents, appEventSink) = AsyncStream.makeStream(of: AppModelEvent.self)
    }

    var now: Date { configuration.clock.now }

    func key(id: String) -> APNSEmulatorSigningKey? {
        world.withLock { $0.keys[id] }
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
