import DequeModule
import NIOCore

/// A batch input fed page by page from an `AsyncSequence` by one pump task (`APNSPagePump`).
///
/// Memory stays bounded because the pump may fetch a page only while fewer than
/// `maximumPagesAhead` wait here: the page being sent, at most that many behind it, and the one the
/// source is producing are all that is ever held. When the batch stops pulling (its window is full
/// or its outcome consumer is behind) pages stop leaving, the pump stops fetching, and the source
/// feels the back-pressure.
struct APNSPageInput: APNSPushBatchInput {
    /// Pages buffered ahead of the one being sent: enough that a fetch overlaps sending, no more.
    static let maximumPagesAhead = 2

    private var pages = Deque<[APNSDevicePush]>()
    private var page: [APNSDevicePush] = []
    private var position = 0
    private var sourceEnded = false
    private var closed = false
    /// The pump's wait for room, completed with `true` when a page left the buffer, `false` to stop.
    private var room: EventLoopPromise<Bool>?
    private var pump: Task<Void, Never>?

    mutating func next() -> APNSPushBatchInputStep {
        while position == page.count {
            guard let next = pages.popFirst() else {
                // Let the finished page go rather than keep it until the next arrives.
                page = []
                position = 0
                return sourceEnded || closed ? .end : .waiting
            }
            page = next
            position = 0
            if let room, pages.count < Self.maximumPagesAhead {
                self.room = nil
                room.succeed(true)
            }
        }
        position += 1
        return .push(page[position - 1])
    }

    /// Takes a page from the pump. The future tells it when it may fetch the next page (`true`) or
    /// that it must stop (`false`: the batch is closed).
    mutating func append(_ newPage: [APNSDevicePush], eventLoop: any EventLoop) -> EventLoopFuture<Bool> {
        guard !closed else { return eventLoop.makeSucceededFuture(false) }
        if !newPage.isEmpty { pages.append(newPage) }
        if pages.count < Self.maximumPagesAhead { return eventLoop.makeSucceededFuture(true) }
        let promise = eventLoop.makePromise(of: Bool.self)
        room = promise
        return promise.futureResult
    }

    /// The source has no more pages (it finished or threw).
    mutating func endOfSource() {
        sourceEnded = true
    }

    /// Keeps the pump's task so that closing can cancel a fetch in progress.
    mutating func adopt(pump task: Task<Void, Never>) {
        if closed { task.cancel() } else { pump = task }
    }

    mutating func close() {
        closed = true
        pages.removeAll()
        page = []
        position = 0
        room?.succeed(false)
        room = nil
        pump?.cancel()
        pump = nil
    }
}
