import NIOPosix
import Synchronization

/// Delivers answered broadcasts to their subscribers soon after their answer, as APNs fans a
/// broadcast out after taking it: a slice of `activitiesPerSlice` at a time, letting go of the
/// world's lock between slices, so that a broadcast's admission waits for a slice at most (about a
/// millisecond), never for a whole channel's walk. Started and stopped with the emulator. Without
/// it nothing is lost: the next reader of the world delivers what is left first.
///
/// The walk runs on SwiftNIO's blocking pool, not on the task that waits for wakes. `marquee`
/// runs Swift's tasks on its event loops (`ConcurrencyExecutor`), and an event loop runs the tasks
/// queued on it until none is left before it reads its sockets again: a task that yields between
/// slices is queued again at once, so a walk over a 100,000-subscriber channel held one of the
/// emulator's loops, and every connection on it, for its whole length (the answers to Marquee's
/// broadcasts on that loop 60–130 ms late in the match-day soak, docs/history/reliability.md).
final class BroadcastCourier: Sendable {
    /// Activities reached under one hold of the world's lock.
    static let activitiesPerSlice = 1_000

    private let state: EmulatorState
    private let task = EmulatorBackgroundTask()
    /// Set by `shutdown`: a walk under way stops at its next slice.
    private let stopping = Atomic<Bool>(false)

    init(state: EmulatorState) {
        self.state = state
    }

    func start() {
        task.start { [self] in
            for await _ in state.deliveryWakes {
                // Fails only once the pool is shutting down, with the process; what is left is
                // delivered by the next reader of the world.
                _ = try? await NIOThreadPool.singleton.runIfActive {
                    while !self.stopping.load(ordering: .relaxed),
                        !self.state.deliverAnsweredBroadcasts(activityLimit: Self.activitiesPerSlice)
                    {}
                }
            }
        }
    }

    /// Stops waking; what is still answered and undelivered is delivered by the next reader.
    func shutdown() async {
        stopping.store(true, ordering: .relaxed)
        await task.stop()
    }
}
