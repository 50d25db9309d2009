import Foundation
import MarqueeEngine
import Testing

/// The `confirm` policy's rules for one device, without any I/O: Marquee asks the device rather than
/// guess, never sends a device that shows the activity a second start, and never resends in silence.
@Suite("Start confirmation")
struct StartConfirmationTests {
    let sent = Date(timeIntervalSince1970: 1_767_225_600)
    let rules = StartConfirmation(arrivalGrace: .seconds(60), window: .seconds(600))

    func at(_ seconds: TimeInterval) -> Date { sent.addingTimeInterval(seconds) }

    @Test("an uncertain start whose app can be asked is asked once, then waited for until the window closes")
    func uncertainIsAsked() {
        var device = StartConfirmation.Device(start: .uncertain(sentAt: sent), canBeAsked: true)
        #expect(rules.step(for: device, now: at(1)) == .ask)
        device.askedAt = at(2)
        #expect(rules.step(for: device, now: at(3)) == .wait(until: at(602)))
        #expect(rules.step(for: device, now: at(601)) == .wait(until: at(602)))
        #expect(rules.step(for: device, now: at(602)) == .uncertain)
    }

    @Test("an uncertain start whose app registered no device token stays uncertain: it cannot be asked")
    func unaskable() {
        let device = StartConfirmation.Device(start: .uncertain(sentAt: sent), canBeAsked: false)
        #expect(rules.step(for: device, now: at(1)) == .uncertain)
    }

    @Test(
        """
        a watched device whose app cannot be asked is waited for through the window: its app may still report on \
        its own
        """
    )
    func unaskableWatched() {
        var device = StartConfirmation.Device(start: .uncertain(sentAt: sent), canBeAsked: false, watchedSince: at(10))
        #expect(rules.step(for: device, now: at(11)) == .wait(until: at(610)))
        #expect(rules.step(for: device, now: at(610)) == .uncertain)
        // The user opened the app, which said no activity is there: the start goes once the grace passed.
        device.report = .absent(at: at(30))
        #expect(rules.step(for: device, now: at(31)) == .wait(until: at(60)))
        #expect(rules.step(for: device, now: at(60)) == .start)
        device.restarted = true
        #expect(rules.step(for: device, now: at(61)) == .uncertain)
    }

    @Test("a device that reports showing is confirmed and never started again, even after a later absent-free window")
    func showingConfirms() {
        let device = StartConfirmation.Device(
            start: .uncertain(sentAt: sent),
            report: .showing(at: at(5)),
            askedAt: at(1),
            canBeAsked: true
        )
        #expect(rules.step(for: device, now: at(5)) == .confirmed)
        #expect(rules.step(for: device, now: at(10_000)) == .confirmed)
    }

    @Test("a showing report from before an uncertain start still confirms: a start would add a second activity")
    func earlierShowingConfirmsUncertain() {
        let device = StartConfirmation.Device(
            start: .uncertain(sentAt: sent),
            report: .showing(at: at(-30)),
            canBeAsked: true
        )
        #expect(rules.step(for: device, now: at(1)) == .confirmed)
    }

    @Test(
        """
        an absent report counts once the start has had the grace period to arrive; before that it is weighed at \
        its end
        """
    )
    func absentAfterGrace() {
        var device = StartConfirmation.Device(
            start: .uncertain(sentAt: sent),
            report: .absent(at: at(10)),
            askedAt: at(1),
            canBeAsked: true
        )
        #expect(rules.step(for: device, now: at(10)) == .wait(until: at(60)))
        #expect(rules.step(for: device, now: at(60)) == .start)
        device.report = .absent(at: at(90))
        #expect(rules.step(for: device, now: at(90)) == .start)
    }

    @Test("an accepted start the device reports absent after the grace period is sent again, once")
    func acceptedButAbsent() {
        var device = StartConfirmation.Device(
            start: .accepted(sentAt: sent),
            report: .absent(at: at(120)),
            canBeAsked: true
        )
        #expect(rules.step(for: device, now: at(120)) == .start)
        device.restarted = true
        #expect(rules.step(for: device, now: at(500)) == .none)
    }

    @Test("a device sent the start again after an absent report is not sent it a third time; uncertain stays reported")
    func restartOnlyOnce() {
        let device = StartConfirmation.Device(
            start: .uncertain(sentAt: sent),
            report: .absent(at: at(120)),
            askedAt: at(1),
            canBeAsked: true,
            restarted: true
        )
        #expect(rules.step(for: device, now: at(200)) == .uncertain)
    }

    @Test("an ended or dismissed activity is the user's choice: nothing is sent")
    func endedIsFinal() {
        let device = StartConfirmation.Device(
            start: .uncertain(sentAt: sent),
            report: .ended(at: at(30)),
            canBeAsked: true
        )
        #expect(rules.step(for: device, now: at(1_000)) == .ended)
    }

    @Test("an accepted start with no report needs nothing; an absent report older than the start is not weighed")
    func acceptedIsQuiet() {
        #expect(rules.step(for: .init(start: .accepted(sentAt: sent), canBeAsked: true), now: at(1)) == .none)
        let stale = StartConfirmation.Device(
            start: .accepted(sentAt: sent),
            report: .absent(at: at(-5)),
            canBeAsked: true
        )
        #expect(rules.step(for: stale, now: at(1_000)) == .none)
    }
}
