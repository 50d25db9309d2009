import MarqueeCore

/// The `apns-collapse-id` every start push of one event carries: APNs keeps only the newest push
/// of a collapse ID for a device it cannot reach, so an offline device gets the event's latest
/// start rather than whichever start came first, and never two starts of the same event from one
/// hold (`apns-reference.md`: at most 64 bytes, otherwise `BadCollapseId`).
///
/// Derived from the event's identity alone, so every job and replica that starts the event sends
/// the same one: a fixed prefix and the event ID's 32 hex digits, 46 bytes of ASCII.
enum StartCollapseID {
    static let prefix = "marquee-start-"

    static func value(for event: EventID) -> String {
        prefix + String(event.description.filter { $0 != "-" })
    }
}
