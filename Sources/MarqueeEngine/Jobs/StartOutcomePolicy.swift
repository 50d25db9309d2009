import MarqueeCore

/// What only a start job decides, beside the windows, commits and retries every fan-out shares
/// (`FanOutStateMachine`): which start each device gets (the channel or an update token), which
/// tokens of a page an earlier run may have sent before it crashed and what becomes of them, what
/// becomes of a start that got no answer (`UncertainStartPolicy`; a second start is a second Live
/// Activity), and which accepted starts leave an activity whose update token is kept.
struct StartOutcomePolicy: FanOutPolicy {
    /// Under `UncertainStartPolicy.resend`, how many times a start that got no answer is sent again.
    /// Unanswered sends do not use up `Configuration.maximumAttempts`, which counts APNs' answers: a
    /// device must not be left without its start because resets and crashes cut off its sends as
    /// often as APNs asked for a retry (a 50,000-device chaos run left 2 devices without a start that
    /// way, at 3 attempts). A bound still, for a connection that loses every write.
    static let maximumUnansweredResends = 10

    /// Whether the event has a broadcast channel in the job's environment.
    let hasChannel: Bool
    /// The job asked for `input-push-token` starts on every device.
    let everyoneGetsUpdateToken: Bool
    /// What the job does with a start that got no answer.
    let uncertainStarts: UncertainStartPolicy

    /// The start a device gets: a channel from iOS 18 on (when the event has one and the job did not
    /// ask for update tokens), an update token otherwise. An unknown version gets an update token,
    /// which every iOS that has push-to-start understands.
    func kind(forIOSVersion version: String?) -> FanOutStateMachine.StartKind {
        // The major version is read in place: this runs for every token of a start, and splitting
        // the string made an array for each.
        guard hasChannel, !everyoneGetsUpdateToken, let version,
            let major = Int(version[..<(version.utf8.firstIndex(of: UInt8(ascii: ".")) ?? version.endIndex)])
        else { return .updateToken }
        return major >= 18 ? .channel : .updateToken
    }

    /// An audience page (in token-row order) split into the tokens left unsent as `uncertain` and
    /// the rows to send. Tokens through `crashWindowEnd` (an earlier run's reservation, when this
    /// run resumes it) were handed to APNs by a run that crashed before it committed their outcome
    /// (the audience leaves out those with one or in the start ledger): they may have their start.
    /// Under `skip` and `confirm` they are not sent; under `resend` they go again, marked so.
    func page(
        _ recipients: [AudienceRecipient],
        crashWindowEnd: Int64?
    ) -> (uncertain: [Int64], rows: [FanOutStateMachine.PageRow]) {
        let uncertainThrough = uncertainStarts.resendsInJob ? nil : crashWindowEnd
        let uncertain = uncertainThrough.map { through in recipients.prefix { $0.rowID <= through } } ?? []
        let rest = Array(recipients.dropFirst(uncertain.count))
        return (uncertain.map(\.rowID), rows(rest, mayHaveArrivedThrough: crashWindowEnd))
    }

    /// Recipients as rows to send: each its kind of start, and those through
    /// `mayHaveArrivedThrough` marked as may have had it already.
    func rows(_ recipients: [AudienceRecipient], mayHaveArrivedThrough: Int64? = nil) -> [FanOutStateMachine.PageRow] {
        recipients.map { recipient in
            FanOutStateMachine.PageRow(
                rowID: recipient.rowID,
                token: recipient.token,
                kind: kind(forIOSVersion: recipient.iosVersion),
                mayHaveArrived: mayHaveArrivedThrough.map { recipient.rowID <= $0 } ?? false
            )
        }
    }

    /// Final as `uncertain` under `skip` and `confirm` (whose confirmation job then asks the
    /// device); under `resend`, sent again after a back-off without using up an attempt (through
    /// the start ledger), until answered or unanswered `maximumUnansweredResends` times more.
    func unanswered(_ send: FanOutStateMachine.Send) -> FanOutStateMachine.Unanswered {
        uncertainStarts.resendsInJob && send.unanswered < Self.maximumUnansweredResends ? .resend : .final
    }

    /// An `input-push-token` start: its activity is recorded as starting, so that the update token
    /// the app reports is kept for it.
    func keepsUpdateToken(ofAccepted send: FanOutStateMachine.Send) -> Bool {
        send.kind == .updateToken
    }
}
