import MarqueeAPNS

/// Pages given up front: a retry round (its tokens reserved when they were first handed out).
/// Those it does not hand out (the run stopped sending first) are `withheld`: they were never sent.
struct FixedPushPages: AsyncSequence, Sendable {
    typealias Element = [APNSDevicePush]
    let pages: [[APNSDevicePush]]
    let mayHandOut: @Sendable () -> Bool
    let withheld: @Sendable (Int) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<[APNSDevicePush]>
        let mayHandOut: @Sendable () -> Bool
        let withheld: @Sendable (Int) -> Void

        mutating func next() async throws -> [APNSDevicePush]? {
            guard mayHandOut() else {
                let unsent = remaining.reduce(0) { $0 + $1.count }
                remaining = []
                if unsent > 0 { withheld(unsent) }
                return nil
            }
            return remaining.popFirst()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(remaining: pages[...], mayHandOut: mayHandOut, withheld: withheld)
    }
}
