import MarqueeCore

/// A value, or the APNs reason a request is refused with. (`APNSErrorReason` is a reason string,
/// not a Swift `Error`, so `Result` does not fit.)
enum Checked<Value> {
    case success(Value)
    case failure(APNSErrorReason)
}

extension Checked: Sendable where Value: Sendable {}
