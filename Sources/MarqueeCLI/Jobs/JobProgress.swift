import Foundation
import MarqueeClient

/// How a job's progress reads: a bar line while it runs, a summary when it ends, and the exit
/// code its outcome gives.
enum JobProgress {
    typealias Job = Components.Schemas.Job

    /// `[#####-----]  45%  sent 4,500 / 10,000  failed 12  uncertain 3  1,204/s  ~5s left`
    /// (`uncertain` only when some are)
    static func line(_ job: Job) -> String {
        let progress = job.progress
        var parts: [String] = []
        if let total = progress.total, total > 0 {
            parts.append(ProgressBar.bar(Double(progress.sent) / Double(total)))
            parts.append("sent \(Formatting.count(progress.sent)) / \(Formatting.count(total))")
        } else {
            parts.append("sent \(Formatting.count(progress.sent))")
        }
        parts.append("failed \(Formatting.count(progress.failed))")
        if progress.uncertain > 0 { parts.append("uncertain \(Formatting.count(progress.uncertain))") }
        if let rate = progress.ratePerSecond { parts.append("\(Formatting.count(Int(rate.rounded())))/s") }
        if let left = progress.estimatedSecondsLeft, job.state == .running {
            parts.append("~\(Formatting.duration(left)) left")
        }
        parts.append(job.state.rawValue)
        return parts.joined(separator: "  ")
    }

    /// One paragraph: the outcome, the counts, the failures by reason.
    static func summary(_ job: Job) -> String {
        let progress = job.progress
        var text =
            "Job \(job.id) \(job.state.rawValue): \(Formatting.count(progress.sent)) sent, "
            + "\(Formatting.count(progress.accepted)) accepted, \(Formatting.count(progress.failed)) failed"
        if progress.uncertain > 0 { text += ", \(Formatting.count(progress.uncertain)) uncertain" }
        if progress.tokensRetired > 0 { text += ", \(Formatting.count(progress.tokensRetired)) tokens retired" }
        let failures = progress.failures.map { "\($0.reason ?? $0.outcome.rawValue) \(Formatting.count($0.count))" }
        if !failures.isEmpty { text += " (" + failures.joined(separator: ", ") + ")" }
        if let error = job.lastError { text += "\nlast error: \(error)" }
        if let confirmation = job.confirmation { text += "\nconfirmation: " + Self.confirmation(confirmation) }
        if let hint = uncertainHint(job) { text += "\n" + hint }
        return text
    }

    /// What the confirmation (`jobs.uncertainStarts=confirm`) did with the job's uncertain devices:
    /// `20 asked, 12 confirmed, 5 restarted, 0 ended, 3 uncertain, 0 waiting`.
    static func confirmation(_ confirmation: Components.Schemas.StartConfirmationProgress) -> String {
        [
            ("asked", confirmation.asked), ("confirmed", confirmation.confirmed), ("restarted", confirmation.restarted),
            ("ended", confirmation.ended), ("uncertain", confirmation.uncertain), ("waiting", confirmation.waiting),
        ]
        .map { "\(Formatting.count($0.1)) \($0.0)" }
        .joined(separator: ", ")
    }

    /// What uncertain starts mean and what to do, for a finished start job that has some. Under
    /// the confirm policy the devices' apps are asked first: while some are undecided the hint says
    /// so, and afterwards only the devices the confirmation left uncertain are worth a resend.
    static func uncertainHint(_ job: Job) -> String? {
        var count = job.progress.uncertain
        guard count > 0, job.state != .pending, job.state != .running else { return nil }
        if let confirmation = job.confirmation {
            // Devices the confirmation has not decided yet: those it watches, and those it has not
            // reached (just after the start finished it has reached none).
            let decided = confirmation.confirmed + confirmation.restarted + confirmation.ended + confirmation.uncertain
            let open = max(confirmation.waiting, count - decided)
            if open > 0 {
                return
                    """
                    \(Self.starts(count)) got no answer from APNs: Marquee asks those devices' apps whether they \
                    show the activity 
                    """
                        + "and starts those that say it is absent "
                        + "(\(Formatting.count(open)) still undecided: marquee jobs show \(job.id))"
            }
            count = confirmation.uncertain
            guard count > 0 else { return nil }
        }
        return "\(Self.starts(count)) got no answer from APNs: those devices may or may not show the activity. "
            + "To send them the start again (a device that has it will show it twice): "
            + "marquee jobs resend-uncertain \(job.id)"
    }

    private static func starts(_ count: Int64) -> String {
        count == 1 ? "1 start" : "\(Formatting.count(count)) starts"
    }

    /// 0 when every delivery was accepted, 7 when some failed or are uncertain, 5 when the job was
    /// cancelled, 6 when it failed (the server or APNs could not finish it; starting again may
    /// succeed).
    static func exitCode(_ job: Job) -> CLIExitCode {
        switch job.state {
        case .succeeded: job.progress.failed > 0 || job.progress.uncertain > 0 ? .partial : .ok
        case .cancelled: .rejected
        case .failed: .unavailable
        case .pending, .running: .unexpected
        }
    }
}
