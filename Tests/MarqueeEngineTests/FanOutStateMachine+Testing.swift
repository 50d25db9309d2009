import Foundation
import MarqueeCore

@testable import MarqueeEngine

extension FanOutStateMachine {
    /// A machine for update-token sends (an activity-update job's), for tests of what happens
    /// around the sends.
    static func forTesting(batchSize: Int = 100, checkpoint: Int64? = nil) -> FanOutStateMachine {
        FanOutStateMachine(
            configuration: .init(batchSize: batchSize, commitInterval: .milliseconds(250)),
            jobID: JobID(),
            policy: PlainFanOutPolicy(),
            checkpoint: checkpoint
        )
    }

    /// Reads recipients as the machine's start policy would have them sent (each its kind of
    /// start), or as update tokens under a plain policy.
    mutating func pageRead(_ recipients: [AudienceRecipient], mayHaveArrivedThrough: Int64? = nil) -> [Send] {
        let rows =
            (policy as? StartOutcomePolicy)?.rows(recipients, mayHaveArrivedThrough: mayHaveArrivedThrough)
            ?? recipients.map { PageRow(rowID: $0.rowID, token: $0.token, kind: .updateToken) }
        return pageRead(rows)
    }

    /// Audience rows on iOS 17.4, one per token row.
    static func recipients(_ rows: ClosedRange<Int64>) -> [AudienceRecipient] {
        rows.map { AudienceRecipient(rowID: $0, token: String(format: "%064llx", $0), iosVersion: "17.4") }
    }
}
