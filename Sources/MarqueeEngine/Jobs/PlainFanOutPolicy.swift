/// The decisions of a fan-out whose pushes a device drops when it has them already (an activity's
/// updates and end carry a timestamp): a send that got no answer is sent again like a "later", and
/// an accepted one starts nothing.
struct PlainFanOutPolicy: FanOutPolicy {
    func unanswered(_ send: FanOutStateMachine.Send) -> FanOutStateMachine.Unanswered { .later }
    func keepsUpdateToken(ofAccepted send: FanOutStateMachine.Send) -> Bool { false }
}
