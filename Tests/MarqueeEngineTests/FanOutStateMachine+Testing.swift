import Foundation
import MarqueeCore

@testable import MarqueeEngine

extension FanOutStateMachine {
    /// A machine for update-token sends (no channel), for tests of what happens around the sends.
    static func forTesting(batchSize: Int = 100, checkpoint: Int64? = nil) -> FanOutStateMachine {
        FanOutStateMachine(
            configuration: .init(batchSize: batchSize, commitInterval: .milliseconds(250)),
            jobID: JobID(),
            hasChannel: false,
            everyoneGetsUpdateToken: true,
            checkpoint: checkpoint
        )
    }

    /// Audience rows on iOS 17.4, one per token row.
    static func recipients(_ rows: ClosedRange<Int64>) -> [AudienceRecipient] {
        rows.map { AudienceRecipient(rowID: $0, token: String(format: "%064llx", $0), iosVersion: "17.4") }
    }
}
