import Foundation
import MarqueeAPNS
import MarqueeCore

/// `apns-expiration` for a broadcast, from the channel's storage policy (`apns-reference.md` §4.2):
/// No Message Stored channels refuse anything but `0`; Most Recent Message Stored channels keep a
/// message at most 8 hours, and `apns-expiration` may only shorten that.
public enum BroadcastExpiration {
    /// Kept below Apple's 8 hours so that a clock a little ahead of APNs' never passes the limit.
    public static let clockMargin: TimeInterval = 60

    /// `0` on No Message Stored channels. On stored channels, the earliest of now + 8 h (less the
    /// margin), the stale date and the dismissal date: nothing is worth delivering after the
    /// activity turned stale or was dismissed. A date already past means `0` (deliver now or never).
    public static func expiration(
        for policy: MessageStoragePolicy,
        now: Date,
        staleDate: Date?,
        dismissalDate: Date?
    ) -> APNSExpiration {
        switch policy {
        case .noMessageStored:
            return .immediately
        case .mostRecentMessageStored:
            let limit = now.addingTimeInterval(TimeInterval(MessageStoragePolicy.maximumStorageSeconds) - clockMargin)
            let until = [limit, staleDate, dismissalDate].compactMap { $0 }.min() ?? limit
            guard until.timeIntervalSince1970.rounded(.down) > now.timeIntervalSince1970.rounded(.down) else {
                return .immediately
            }
            return .at(until)
        }
    }
}
