/// What a start job does with a start that was written to APNs and got no answer
/// (`DeliveryOutcome.uncertain`): the device may or may not have it, and a second start would be a
/// second Live Activity on its Lock Screen. Config key `jobs.uncertainStarts`.
public enum UncertainStartPolicy: String, Sendable, Hashable, CaseIterable {
    /// The default: the start's outcome is final as `uncertain` in the job, as under `skip`, and
    /// the device is asked (`StartConfirmation`): a confirmation job wakes each uncertain device's
    /// app with a background push; one that reports the activity showing is confirmed and never
    /// sent the start again, one that reports it absent (once the start had time to arrive) gets
    /// the start once more with the latest content-state, and one that never answers within the
    /// window stays uncertain and is reported so.
    case confirm
    /// The start's outcome is final as `uncertain` (counted in the job's progress), and it is not
    /// sent again. A device may miss the start; none gets two. An operator can resend a finished
    /// job's uncertain tokens later (`POST /v1/jobs/{jobID}/resend-uncertain`).
    case skip
    /// The start is sent again in a later round of the same job, like a "try again later" answer,
    /// through the start ledger (a token recorded as started is not sent again). No device is left
    /// without the start for want of an answer; one that did get the first send gets a second.
    case resend

    /// Whether the start job itself sends an uncertain start again (`resend`); under `skip` and
    /// `confirm` its outcome is final in the job.
    var resendsInJob: Bool { self == .resend }
}
