import Foundation
import MarqueeCore

extension Date {
    /// The date `duration` later.
    func adding(_ duration: Duration) -> Date {
        addingTimeInterval(duration.timeInterval)
    }
}
