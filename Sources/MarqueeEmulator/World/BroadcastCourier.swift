/// Delivers answered broadcasts to their subscribers soon after their answer, as APNs fans a
/// broadcast out after taking it: a slice of `activitiesPerSlice` at a time, letting go of the
/// world's lock between slices, so that a broadcast's admission waits for a slice at most (about a
/// millisecond), never for a whole channel's walk. Started and stopped with the emulator. Without
/// it nothing is lost: the next reader of the world delivers what is left first.
final class BroadcastCourier: Sendable {
    /// Activities reached under one hold of the world's lock.
    static let activitiesPerSlice = 1_000

    private let state: EmulatorState
    private let task = EmulatorBackgroundTask()

    init(state: EmulatorState) {
        self.state = state
    }

    func start() {
        let state = state
        task.start {
            for await _ in state.deliveryWakes {
                while !Task.isCancelled, !state.deliverAnsweredBroadcasts(activityLimit: Self.activitiesPerSlice) {
                    await Task.yield()
                }
            }
        }
    }

    /// Stops waking; what is still answered and undelivered is delivered by the next reader.
    func shutdown() async {
        await task.stop()
    }
}
