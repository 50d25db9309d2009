/// A flag a run checks between pages, and its waits end at: raised on shutdown or when the lease is
/// gone. A run's flag is also raised by its worker's (`parent`); raising it leaves the parent alone.
public final class RunStop: Sendable {
    private let latch = Latch()
    private let parent: RunStop?

    public init(parent: RunStop? = nil) {
        self.parent = parent
    }

    public func raise() { latch.open() }
    public var isRaised: Bool { latch.isOpen || parent?.isRaised == true }

    /// Returns once this flag or its parent's is raised, or once the task is cancelled.
    func raised() async {
        guard let parent else { return await latch.wait() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.latch.wait() }
            group.addTask { await parent.raised() }
            await group.next()
            group.cancelAll()
        }
    }
}
