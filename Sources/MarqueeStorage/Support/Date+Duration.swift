import Foundation
import MarqueeCore

extension Date {
    /// The date `duration` later.
    func adding(_ duration: Duration) -> Date {
        addingTimeInterval(duration.timeInterval)
    }
}

extension Duration {
    /// Whole microseconds, the unit the broadcast log keeps latencies in.
    var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
