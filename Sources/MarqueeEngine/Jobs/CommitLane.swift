/// One commit at a time, in the order asked: the outcome loop and the flusher both commit.
///
/// A commit that failed for good closes the lane. Taking a batch settles its tokens in the state
/// machine, so every batch taken after it carries a checkpoint past the failed batch's tokens:
/// committed, it would record that checkpoint without their outcomes, and the next run would start
/// past tokens that have none (the flusher's commit hung through a PostgreSQL restart and failed
/// while the outcome loop committed the next batch: sent and started devices missing from the job's
/// accounting, `scripts/chaos --scenario followers`). With the lane closed the run ends instead,
/// and the part resumes from the last committed checkpoint, the failed batch's tokens in its crash
/// window.
actor CommitLane {
    private var busy = false
    private var failure: (any Error)?
    private var waiting: [CheckedContinuation<Void, any Error>] = []

    /// Waits for the lane; throws the error of the commit that closed it, if one did.
    func enter() async throws {
        if let failure { throw failure }
        if !busy {
            busy = true
            return
        }
        try await withCheckedThrowingContinuation { waiting.append($0) }
    }

    /// The commit went through (or there was none): the next caller may commit.
    func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }

    /// The commit failed for good: the lane closes, and every caller waiting or still to come gets
    /// its error.
    func leave(failing error: any Error) {
        failure = error
        busy = false
        let waiters = waiting
        waiting = []
        for waiter in waiters { waiter.resume(throwing: error) }
    }
}
