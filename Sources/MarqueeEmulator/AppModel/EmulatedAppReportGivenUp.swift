import MarqueeCore

/// A presence report a played app stopped sending: MarqueeKit's retry policy gave it up (Marquee
/// refused it for a reason time cannot mend, or every attempt failed). As in a real app, it is sent
/// again only if something runs the app again (a start, an update, Marquee's background push, a
/// launch); until then Marquee's funnel does not have what the device shows. Kept so that a test
/// that compares the funnel with the devices can say which device went silent and why.
public struct EmulatedAppReportGivenUp: Sendable, Hashable, CustomStringConvertible {
    public var environment: APNSEnvironment
    public var deviceID: String
    public var eventKey: String
    /// The report's state (`showing`, `absent`, …).
    public var state: String
    /// Attempts made, the first included.
    public var attempts: Int
    /// The last failure, as MarqueeKit describes it (Marquee's problem, or why no answer came).
    public var failure: String

    public var description: String {
        "device \(deviceID) (\(environment.rawValue)): \(state) for \(eventKey) given up after \(attempts): \(failure)"
    }
}
