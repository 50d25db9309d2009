import Foundation
import MarqueeCore

/// A job as the API shows it: its state and progress, with what can be derived from them.
public struct JobView: Sendable, Hashable {
    public var job: Job
    /// The event a start job starts.
    public var eventKey: String?
    public var environment: APNSEnvironment?
    /// A start of late joiners (the late-join pump's).
    public var lateJoiners: Bool = false
    /// Under `confirm`, on a start job: what its confirmation did with the devices whose start
    /// ended uncertain.
    public var confirmation: ConfirmationCounts?
    /// Final outcomes other than `accepted`, by outcome and reason.
    public var failures: [DeliveryCount]
    /// When the view was taken.
    public var at: Date

    public var total: Int64? { job.progress.total }
    /// Tokens with a final outcome.
    public var sent: Int64 { job.progress.attempted }
    public var accepted: Int64 { job.progress.succeeded }
    public var failed: Int64 { job.progress.failed }
    /// Starts written to APNs that got no answer: the device may or may not show the activity.
    public var uncertain: Int64 { job.progress.uncertain }
    public var retired: Int64 { job.progress.retired }
    /// Pushes sent at 5 because their activity had used its budget of priority-10 pushes.
    public var downgraded: Int64 { job.progress.downgraded }
    /// Tokens of the audience without a final outcome yet (0 once the job has finished).
    public var remaining: Int64? {
        if job.state.isFinished { return 0 }
        return total.map { max(0, $0 - sent) }
    }

    /// Final outcomes per second since the job was created.
    public var rate: Double? {
        let end = job.state.isFinished ? job.updatedAt : at
        let elapsed = end.timeIntervalSince(job.createdAt)
        guard sent > 0, elapsed > 0 else { return nil }
        return Double(sent) / elapsed
    }

    /// The estimated time left at `rate`.
    public var estimatedSecondsLeft: Double? {
        guard let remaining else { return nil }
        if remaining == 0 { return 0 }
        guard let rate, rate > 0 else { return nil }
        return Double(remaining) / rate
    }
}
