import Foundation

/// What was drawn for one device of an app the emulator plays (``EmulatedAppShares``): shown by
/// inspection with the device, so that a test or the funnel can be held against it.
public struct EmulatedAppTraits: Sendable, Hashable, Codable {
    public var neverReports: Bool
    public var offlineAtRegistration: Bool
    public var liveActivitiesOff: Bool
    public var answersBackgroundPush: Bool
    /// How long after Marquee's background push the app wakes, in seconds; `nil` when it never does.
    public var wakeDelaySeconds: Double?

    public init(
        neverReports: Bool,
        offlineAtRegistration: Bool,
        liveActivitiesOff: Bool,
        answersBackgroundPush: Bool,
        wakeDelaySeconds: Double?
    ) {
        self.neverReports = neverReports
        self.offlineAtRegistration = offlineAtRegistration
        self.liveActivitiesOff = liveActivitiesOff
        self.answersBackgroundPush = answersBackgroundPush
        self.wakeDelaySeconds = wakeDelaySeconds
    }

    /// Draws one device's traits: always five draws, in this order, so that one share's change
    /// leaves the other traits of every device as they were.
    static func draw(_ shares: EmulatedAppShares, using random: inout SeededRandom) -> EmulatedAppTraits {
        let neverReports = random.nextFraction() < shares.neverReports
        let offline = random.nextFraction() < shares.offlineAtRegistration
        let liveActivitiesOff = random.nextFraction() < shares.liveActivitiesOff
        let answers = random.nextFraction() < shares.answersBackgroundPush
        let wake = random.nextFraction() * shares.wakeWithin.emulatorSeconds
        let wakes = answers && !neverReports
        return EmulatedAppTraits(
            neverReports: neverReports,
            offlineAtRegistration: offline,
            liveActivitiesOff: liveActivitiesOff,
            answersBackgroundPush: wakes,
            wakeDelaySeconds: wakes ? wake : nil
        )
    }
}

extension Duration {
    /// In seconds, as Foundation's dates count.
    var emulatorSeconds: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
