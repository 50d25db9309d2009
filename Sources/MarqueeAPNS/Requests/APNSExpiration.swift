import Foundation

/// `apns-expiration`: until when APNs keeps trying to deliver.
public enum APNSExpiration: Sendable, Hashable {
    /// `0`: deliver once if the device is reachable now, never store.
    case immediately
    /// Store and retry until this time (whole Unix seconds on the wire).
    case at(Date)

    var headerValue: String {
        switch self {
        case .immediately: "0"
        case .at(let date): String(Int64(date.timeIntervalSince1970.rounded(.down)))
        }
    }
}
