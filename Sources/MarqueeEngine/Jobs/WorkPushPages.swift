import MarqueeAPNS

/// The work's pages as pages of pushes, read one at a time (keyset, from the checkpoint), each
/// registered with the state machine.
///
/// A page goes to the client in slices of at most `sliceSize` pushes, asking `mayHandOut` before
/// each: the client holds only a few slices it has not written yet, so a run told to stop sending
/// (a failed renewal, a lease near its end) hands out nothing more within a slice or two. Each slice
/// is reserved (`handingOut`) before it goes, `reservationStride` rows at a time rather than a page
/// at a time: a crash leaves uncertain what was reserved and not yet answered, so what is reserved
/// ahead of the sending stays within a few slices, for one store write per stride.
struct WorkPushPages<Work: FanOutWork>: AsyncSequence, Sendable {
    typealias Element = [APNSDevicePush]
    /// Pushes handed to the client at once (`FanOutRunner.maximumSliceSize` at most).
    let sliceSize: Int
    /// Sends reserved per store write: the slice handed out and those after it, within the page.
    var reservationStride: Int { 4 * sliceSize }
    let work: Work
    let cursor: Int64
    let pageSize: Int
    let machine: MachineBox
    let mayHandOut: @Sendable () -> Bool
    /// Reserves the tokens through a row before sends up to it are handed out.
    let handingOut: @Sendable (Int64) async throws -> Void
    /// Sends through a row are handed out now.
    let handedOut: @Sendable (Int64) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        let pages: WorkPushPages
        var cursor: Int64
        var finished = false
        var slices: ArraySlice<APNSDevicePush> = []
        /// The sends behind `slices`, in the same order.
        var sends: ArraySlice<FanOutStateMachine.Send> = []
        /// The highest row this iterator has reserved (`handingOut`).
        var reservedThrough: Int64?

        mutating func next() async throws -> [APNSDevicePush]? {
            do {
                return try await nextSlice()
            } catch {
                // The round ends on this error, and every send of it without an outcome then
                // counts as unanswered (uncertain): those never handed out must leave it first, or
                // a store that failed for a moment (a reservation) would leave the rest of the page
                // uncertain without a push written.
                withdrawUnsent()
                throw error
            }
        }

        private mutating func nextSlice() async throws -> [APNSDevicePush]? {
            while true {
                if !pages.mayHandOut() {
                    withdrawUnsent()
                    return nil
                }
                if !slices.isEmpty {
                    let count = Swift.min(pages.sliceSize, slices.count)
                    if reservedThrough.map({ $0 < sends[sends.startIndex + count - 1].tokenRowID }) ?? true {
                        let through = sends[Swift.min(sends.startIndex + pages.reservationStride, sends.endIndex) - 1]
                            .tokenRowID
                        try await pages.handingOut(through)
                        reservedThrough = through
                    }
                    pages.handedOut(sends[sends.startIndex + count - 1].tokenRowID)
                    sends = sends.dropFirst(count)
                    let slice = slices.prefix(count)
                    slices = slices.dropFirst(count)
                    return Array(slice)
                }
                if finished || pages.machine.withLock({ $0.retryBacklogIsFull }) { return nil }
                guard let page = try await pages.work.page(after: cursor, limit: pages.pageSize, machine: pages.machine)
                else {
                    finished = true
                    return nil
                }
                cursor = page.lastRow
                finished = page.isLast
                sends = page.sends[...]
                slices = try page.sends.map(pages.work.push)[...]
            }
        }

        /// What was read but not handed out was never sent: it leaves the round.
        private mutating func withdrawUnsent() {
            guard let first = sends.first else { return }
            pages.machine.withLock { $0.withdrawUnsent(sends.count, resumeAfter: first.tokenRowID - 1) }
            sends = []
            slices = []
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pages: self, cursor: cursor)
    }
}
