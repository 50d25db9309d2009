import Crypto
import Foundation
import MarqueeCore

extension JobID {
    /// The ID of the job that sends `job`'s uncertain tokens the start again: one per job, so that
    /// asking twice finds the first resend instead of sending the same tokens a third time.
    init(resendingUncertainOf job: JobID) {
        var hasher = SHA256()
        hasher.update(data: Array("marquee.job.resend-uncertain:".utf8))
        withUnsafeBytes(of: job.uuid.uuid) { hasher.update(bufferPointer: $0) }
        self.init(version8Of: hasher)
    }
}
