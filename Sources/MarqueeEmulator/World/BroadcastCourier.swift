import Synchronization

/// Delivers answered broadcasts to their subscribers soon after their answer
/// (`EmulatorState.withWorld`), as APNs fans a broadcast out after taking it. Started and stopped
/// with the emulator. Without it nothing is lost: the next reader of the world delivers them first.
final class BroadcastCourier: Sendable {
    private let state: EmulatorState
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(state: EmulatorState) {
        self.state = state
    }

    func start() {
        let state = state
        let started = Task {
            for await _ in state.deliveryWakes {
                state.withWorld { _ in }
            }
        }
        task.withLock { $0 = started }
    }

    /// Stops waking; what is still answered and undelivered is delivered by the next reader.
    func shutdown() async {
        let running = task.withLock { task in
            defer { task = nil }
            return task
        }
        running?.cancel()
        await running?.value
    }
}
