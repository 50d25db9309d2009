import Foundation
import MarqueeCore

/// What the `confirm` policy does about one device of an event: the rules that turn what Marquee
/// sent and what the device's app said into the one next step, with no I/O.
///
/// Marquee knows what APNs accepted, not what a Lock Screen shows. A start that was written and
/// never answered (`uncertain`) may or may not have arrived, and a second start would be a second
/// Live Activity; so instead of guessing, Marquee asks the device: a background push to the app's
/// device token wakes it, and it reports what ActivityKit shows. A device that says it shows the
/// activity is confirmed and never sent it again; one that says no activity is there, once the start
/// has had time to arrive, gets the start; one that never answers within the window stays uncertain
/// and is reported as such, never resent in silence.
public struct StartConfirmation: Sendable, Hashable {
    /// How long a start may take to reach a device after it was sent: an `absent` report sent
    /// sooner may precede a start still on its way, so it is weighed only once this has passed.
    public var arrivalGrace: Duration
    /// How long Marquee waits for the app of an uncertain device to answer the background push
    /// (iOS delivers those at its discretion: minutes, not seconds). Past it, the device stays
    /// uncertain.
    public var window: Duration

    public init(arrivalGrace: Duration = .seconds(60), window: Duration = .seconds(600)) {
        self.arrivalGrace = arrivalGrace
        self.window = window
    }

    /// What Marquee last sent the device for the event.
    public enum Start: Sendable, Hashable {
        /// APNs accepted it at `sentAt`.
        case accepted(sentAt: Date)
        /// Written at `sentAt`, never answered: it may or may not have arrived.
        case uncertain(sentAt: Date)
    }

    /// What the device's app last reported for the event.
    public enum Report: Sendable, Hashable {
        case showing(at: Date)
        /// The activity ended, or the user dismissed it: the user's choice, never undone by a start.
        case ended(at: Date)
        /// The app runs, the event is live, and no activity of it is there.
        case absent(at: Date)
    }

    /// One device's state as the store holds it.
    public struct Device: Sendable, Hashable {
        public var start: Start
        public var report: Report?
        /// When Marquee sent the background push that asks the app to report, if it did.
        public var askedAt: Date?
        /// Whether the app registered a device token: without one it cannot be asked.
        public var canBeAsked: Bool
        /// Whether the device was already sent the start again after reporting it absent: it is,
        /// at most once per event, so that a device whose Live Activities are off is not sent a
        /// start after every report.
        public var restarted: Bool
        /// When the confirmation began watching the device: one whose app cannot be asked may still
        /// report on its own (the user opens the app), so it is watched for the window from then.
        /// `nil`: not watched, such a device is uncertain at once.
        public var watchedSince: Date?

        public init(
            start: Start,
            report: Report? = nil,
            askedAt: Date? = nil,
            canBeAsked: Bool,
            restarted: Bool = false,
            watchedSince: Date? = nil
        ) {
            self.start = start
            self.report = report
            self.askedAt = askedAt
            self.canBeAsked = canBeAsked
            self.restarted = restarted
            self.watchedSince = watchedSince
        }
    }

    /// The next step for one device.
    public enum Step: Sendable, Hashable {
        /// The device shows the activity: nothing more is ever sent for its start.
        case confirmed
        /// The activity ended or was dismissed on the device: nothing is sent.
        case ended
        /// Wake the app with a background push so that it reports.
        case ask
        /// Send the start now (with the event's latest content-state): the device says no activity
        /// is there, and the start has had time to arrive.
        case start
        /// Nothing to do before `until`; decide again then.
        case wait(until: Date)
        /// The window passed with no answer (or the app cannot be asked): the start stays
        /// uncertain and is reported so.
        case uncertain
        /// Nothing to decide: an accepted start the device has not contradicted.
        case none
    }

    public func step(for device: Device, now: Date) -> Step {
        let sentAt: Date
        let isUncertain: Bool
        switch device.start {
        case .accepted(let at): (sentAt, isUncertain) = (at, false)
        case .uncertain(let at): (sentAt, isUncertain) = (at, true)
        }
        switch device.report {
        case .showing(let at)? where at >= sentAt || isUncertain:
            // A showing report from before an uncertain start still proves an activity of the
            // event is there: a start would only add a second one.
            return .confirmed
        case .ended(let at)? where at >= sentAt || isUncertain:
            return .ended
        case .absent(let at)? where at >= sentAt:
            guard !device.restarted else { return isUncertain ? .uncertain : .none }
            let weighedFrom = sentAt.advanced(by: arrivalGrace.timeInterval)
            return now >= weighedFrom ? .start : .wait(until: weighedFrom)
        default:
            break
        }
        // No report since the start was sent.
        guard isUncertain else { return .none }
        guard device.canBeAsked else {
            guard let watchedSince = device.watchedSince else { return .uncertain }
            let closes = watchedSince.advanced(by: window.timeInterval)
            return now >= closes ? .uncertain : .wait(until: closes)
        }
        guard let askedAt = device.askedAt else { return .ask }
        let closes = askedAt.advanced(by: window.timeInterval)
        return now >= closes ? .uncertain : .wait(until: closes)
    }
}
