/// Delivers answered broadcasts to their subscribers soon after their answer
/// (`EmulatorState.withWorld`), as APNs fans a broadcast out after taking it. Started and stopped
/// with the emulator. Without it nothing is lost: the next reader of the world delivers them first.
final class BroadcastCourier: Sendable {
    private let state: EmulatorState
    private let task = EmulatorBackgroundTask()

    init(state: EmulatorState) {
        self.state = state
    }

    func start() {
        let state = state
        task.start {
            for await _ in state.deliveryWakes {
                state.withWorld { _ in }
            }
        }
    }

    /// Stops waking; what is still answered and undelivered is delivered by the next reader.
    func shutdown() async {
        await task.stop()
    }
}
