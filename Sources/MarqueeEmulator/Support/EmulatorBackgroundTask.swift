import Synchronization

/// The one task a part of the emulator runs from the emulator's start to its shutdown (the app
/// model's reports, the broadcast courier's deliveries): started with the emulator, cancelled and
/// awaited when it shuts down.
final class EmulatorBackgroundTask: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    func start(_ operation: @escaping @Sendable () async -> Void) {
        let started = Task(operation: operation)
        task.withLock { $0 = started }
    }

    /// Cancels the task and waits for it to end.
    func stop() async {
        let running = task.withLock { task in
            defer { task = nil }
            return task
        }
        running?.cancel()
        await running?.value
    }
}
