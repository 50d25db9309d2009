import Synchronization

/// A flag a run checks between pages: raised on shutdown or when the lease is gone.
/// A run's flag is also raised by its worker's (`parent`); raising it leaves the parent alone.
public final class RunStop: Sendable {
    private let raised = Mutex(false)
    private let parent: RunStop?

    public init(parent: RunStop? = nil) {
        self.parent = parent
    }

    public func raise() { raised.withLock { $0 = true } }
    public var isRaised: Bool { raised.withLock { $0 } || parent?.isRaised == true }
}
