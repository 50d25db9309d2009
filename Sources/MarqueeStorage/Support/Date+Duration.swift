import Foundation

extension Date {
    /// The date `duration` later.
    func adding(_ duration: Duration) -> Date {
        let (seconds, attoseconds) = duration.components
        return addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
    }
}
