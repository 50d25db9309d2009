import Foundation
import MarqueeCore

extension Job {
    /// The job as its API view shows it: a fan-out's progress is the sum of its partitions', and
    /// it is running once one of them has begun.
    func combined(with parts: [Job]) -> Job {
        guard !parts.isEmpty else { return self }
        var job = self
        for part in parts {
            job.progress.attempted += part.progress.attempted
            job.progress.succeeded += part.progress.succeeded
            job.progress.failed += part.progress.failed
            job.progress.retired += part.progress.retired
            job.progress.uncertain += part.progress.uncertain
            job.updatedAt = max(job.updatedAt, part.updatedAt)
            job.attempts = max(job.attempts, part.attempts)
            if job.lastError == nil { job.lastError = part.lastError }
        }
        guard !state.isFinished else { return job }
        if parts.allSatisfy(\.state.isFinished) {
            // The last partition finishes the job's row too; until that write lands (or if it
            // failed), the view says what it will say.
            job.state =
                parts.contains { $0.state == .failed }
                ? .failed : parts.allSatisfy { $0.state == .cancelled } ? .cancelled : .succeeded
        } else if parts.contains(where: { $0.state != .pending || $0.attempts > 0 }) {
            job.state = .running
        }
        return job
    }
}

extension DeliveryCount {
    /// One count per outcome and reason, summed over the jobs they came from.
    static func merged(_ counts: [DeliveryCount]) -> [DeliveryCount] {
        var merged: [DeliveryCount] = []
        for count in counts {
            if let index = merged.firstIndex(where: { $0.outcome == count.outcome && $0.reason == count.reason }) {
                merged[index].count += count.count
            } else {
                merged.append(count)
            }
        }
        return merged
    }
}
