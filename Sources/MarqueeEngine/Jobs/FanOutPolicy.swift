/// What differs between kinds of fan-out in their decisions (their I/O differs by `FanOutWork`):
/// what becomes of a send that got no answer, and whether an accepted send leaves an activity whose
/// update token is to be kept. `FanOutStateMachine` holds one: `StartOutcomePolicy` for a start
/// job, `PlainFanOutPolicy` for an activity-update job.
protocol FanOutPolicy: Sendable {
    /// What becomes of `send`, which was written to APNs and got no answer.
    func unanswered(_ send: FanOutStateMachine.Send) -> FanOutStateMachine.Unanswered
    /// Whether `send`, accepted, started an activity whose update token is to be kept for it
    /// (`FanOutStateMachine.Batch.startedWithUpdateToken`).
    func keepsUpdateToken(ofAccepted send: FanOutStateMachine.Send) -> Bool
}
