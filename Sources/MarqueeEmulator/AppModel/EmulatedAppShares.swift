import Foundation

/// How a population of virtual devices behaves toward Marquee, drawn per device as it registers
/// (for apps the emulator plays: ``APNSEmulator/connectApp(bundleID:to:)``). Each share is a
/// fraction from 0 to 1; the draws come from a generator seeded with ``seed``, so the same seed
/// and the same registrations give the same devices.
public struct EmulatedAppShares: Sendable, Hashable, Codable {
    /// Devices whose app never reports (an old app version, a crash at launch).
    public var neverReports: Double = 0
    /// Devices offline when they register: APNs holds one push for each, a later one displacing it.
    public var offlineAtRegistration: Double = 0
    /// Devices whose user turned Live Activities off: starts answer 200 and nothing shows.
    public var liveActivitiesOff: Double = 0
    /// Devices whose app wakes for Marquee's background push; the others never wake for it.
    public var answersBackgroundPush: Double = 1
    /// An answering device wakes after a delay drawn evenly between 0 and this.
    public var wakeWithin: Duration = .seconds(10)
    /// How long after a start or an end the app reports what it shows (ActivityKit's own delay).
    public var reportDelay: Duration = .seconds(2)
    /// The draws' seed: a run is reproducible.
    public var seed: UInt64 = 1

    public init() {}

    /// Checks every share is a fraction and every duration non-negative.
    public func validated() throws(EmulatorError) -> Self {
        for (name, share) in [
            ("neverReports", neverReports), ("offlineAtRegistration", offlineAtRegistration),
            ("liveActivitiesOff", liveActivitiesOff), ("answersBackgroundPush", answersBackgroundPush),
        ] where !(0...1).contains(share) {
            throw .invalidConfiguration("the share \(name) must be between 0 and 1, not \(share)")
        }
        guard wakeWithin >= .zero, reportDelay >= .zero else {
            throw .invalidConfiguration("wakeWithin and reportDelay must not be negative")
        }
        return self
    }
}
