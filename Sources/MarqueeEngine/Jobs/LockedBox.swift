import Synchronization

/// A run's decisions behind a lock, shared by the tasks of one run.
final class LockedBox<Value>: Sendable {
    private let value: Mutex<Value>

    init(_ value: sending Value) {
        self.value = Mutex(value)
    }

    func withLock<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try value.withLock { try body(&$0) }
    }
}

/// The state machine behind a lock: the page source and the outcome loop run on different tasks.
typealias MachineBox = LockedBox<FanOutStateMachine>

/// The run's lease decisions behind a lock: the watch and the sending run on different tasks.
typealias KeeperBox = LockedBox<LeaseKeeper>
