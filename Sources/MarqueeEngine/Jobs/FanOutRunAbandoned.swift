/// A fan-out run that stopped at once, without handing its job back the usual way: its lease was
/// refused, could lapse, or the run stalled. The runner has already given the lease up (or it
/// lapses), saying why in the job's `lastError`; the job resumes from its checkpoint elsewhere.
struct FanOutRunAbandoned: Error, CustomStringConvertible {
    var fence: LeaseKeeper.Fence

    var description: String { "\(fence); the part stopped sending and gave its lease up" }
}
