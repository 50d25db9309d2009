extension RowMapping {
    /// The lease's condition on a job with a serial key (`Job.serialKey`), the same in both
    /// dialects. A job and its parts are one group; of the unfinished groups with one key, one runs
    /// at a time. A candidate waits while a job of another group with its key holds a live lease,
    /// or is ready (begun, or due) and goes first: begun before not yet begun (a run that was
    /// interrupted, by a crash or a retry, settles what it left in doubt before anyone else sends),
    /// then in order of creation, then of group ID, so that one start's parts are never split by
    /// another's. The order is total, so the first group is never held up by the rank: no two
    /// groups wait for each other. `job` names the candidate's row, `now` the lease's time.
    static func serialKeyIsFree(job: String, now: String) -> String {
        """
        (\(job).serial_key IS NULL OR NOT EXISTS (
            SELECT 1 FROM jobs o
            WHERE o.serial_key = \(job).serial_key AND o.state IN ('pending', 'running')
              AND COALESCE(o.parent_id, o.id) <> COALESCE(\(job).parent_id, \(job).id)
              AND ((o.state = 'running' AND o.lease_expires_at > \(now))
                   OR ((o.attempts > 0 OR o.due_at <= \(now))
                       AND (o.attempts = 0, o.created_at, COALESCE(o.parent_id, o.id))
                           < (\(job).attempts = 0, \(job).created_at, COALESCE(\(job).parent_id, \(job).id))))))
        """
    }
}
