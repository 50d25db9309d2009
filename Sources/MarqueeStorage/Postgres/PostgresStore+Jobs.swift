import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func enqueueJob(_ job: Job) async throws {
        guard !(try await rows(Self.insert(job))).isEmpty else {
            throw StoreError.notFound(entity: "app", id: job.appID.description)
        }
    }

    public func enqueueJobs(_ jobs: [Job]) async throws {
        try await transaction { connection in
            for job in jobs {
                let inserted = try await connection.query(Self.insert(job), logger: logger).collect()
                guard !inserted.isEmpty else { throw StoreError.notFound(entity: "app", id: job.appID.description) }
            }
        }
    }

    /// Inserts the job if its app exists (no row returned otherwise), and announces it to every
    /// replica's worker (NOTIFY is sent at commit).
    static func insert(_ job: Job) -> PostgresQuery {
        """
        INSERT INTO jobs (id, app_id, kind, parent_id, arguments, due_at, state, attempts, progress_attempted,
                          progress_succeeded, progress_failed, progress_total, progress_retired, progress_downgraded,
                          progress_uncertain, checkpoint, last_error, serial_key, created_at, updated_at)
        SELECT \(job.id.uuid), a.id, \(job.kind.rawValue), \(job.parentID?.uuid), \
        \(ColumnCoding.json(job.arguments))::json,
               \(job.dueAt), \(job.state.rawValue), \(job.attempts), \(job.progress.attempted), \
        \(job.progress.succeeded),
               \(job.progress.failed), \(job.progress.total), \(job.progress.retired), \(job.progress.downgraded),
               \(job.progress.uncertain), \(job.checkpoint),
               \(job.lastError), \(job.serialKey), \(job.createdAt), \(job.updatedAt)
        FROM apps a WHERE a.id = \(job.appID.uuid)
        RETURNING id, pg_notify(\(Self.jobsChannel), kind)
        """
    }

    public func childJobs(appID: AppID, parentID: JobID) async throws -> [Job] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.jobColumns(.postgres)) FROM jobs
            WHERE app_id = \(appID.uuid) AND parent_id = \(parentID.uuid)
            ORDER BY created_at, id
            """
        ).mapped(RowMapping.job)
    }

    public func finishParentJob(id: JobID, at: Date) async throws -> JobState? {
        // One statement: of two replicas finishing the last two children at once, each sees the
        // other's child finished once its own commit is visible, and only one moves the parent.
        let updated = try await rows(
            """
            UPDATE jobs p
            SET state = CASE WHEN EXISTS (SELECT 1 FROM jobs c WHERE c.parent_id = p.id AND c.state = 'failed')
                             THEN 'failed' ELSE 'succeeded' END,
                updated_at = \(at)
            WHERE p.id = \(id.uuid) AND p.state IN ('pending', 'running')
              AND NOT EXISTS (SELECT 1 FROM jobs c WHERE c.parent_id = p.id AND c.state IN ('pending', 'running'))
            RETURNING p.state
            """
        )
        return try updated.first.map { try $0.decode(String.self) }.flatMap(JobState.init(rawValue:))
    }

    public func job(appID: AppID, id: JobID) async throws -> Job? {
        try await firstRow(
            """
            SELECT \(unescaped: RowMapping.jobColumns(.postgres)) FROM jobs WHERE app_id = \(appID.uuid) AND id = \
            \(id.uuid)
            """
        ).mapped(RowMapping.job)
    }

    public func leaseJobs(
        owner: String,
        kinds: Set<JobKind>?,
        now: Date,
        leaseDuration: Duration,
        limit: Int
    ) async throws -> [Job] {
        let expiry = now.adding(leaseDuration)
        let kindNames = kinds.map { $0.map(\.rawValue) }
        // SKIP LOCKED: a job another replica is claiming right now is passed over, not waited for,
        // so N workers take N different jobs. A job with a serial key is a candidate only while no
        // job of another group with its key runs, has begun, or is older and due
        // (`RowMapping.serialKeyIsFree`); that check reads other rows, which a lease committing
        // beside this one could change unseen, so leases take turns (a transaction-scoped advisory
        // lock: a lease is one short statement, and this statement's snapshot is taken after the
        // turn of the one before has committed).
        let leased = try await transaction { [logger] connection in
            _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Self.leaseLockKey))", logger: logger)
                .collect()
            return try await connection.query(
                """
                WITH lease AS (SELECT \(now)::timestamptz AS at),
                candidates AS (
                    SELECT j.id FROM jobs j, lease
                    WHERE ((j.state = 'pending' AND j.due_at <= lease.at) OR (j.state = 'running' AND \
                j.lease_expires_at <= lease.at))
                      AND (\(kindNames == nil) OR j.kind = ANY(\(kindNames ?? [])))
                      AND \(unescaped: RowMapping.serialKeyIsFree(job: "j", now: "lease.at"))
                    ORDER BY j.due_at, j.id
                    LIMIT \(max(1, limit))
                    FOR UPDATE OF j SKIP LOCKED
                )
                UPDATE jobs j
                SET state = 'running', lease_owner = \(owner), lease_expires_at = \(expiry), attempts = j.attempts + 1,
                    updated_at = \(now)
                FROM candidates c
                WHERE j.id = c.id
                RETURNING \(unescaped: RowMapping.jobColumns(.postgres, prefix: "j."))
                """,
                logger: logger
            ).collect().mapped(RowMapping.job)
        }
        return leased.sorted { ($0.dueAt, $0.id.uuid.uuidString) < ($1.dueAt, $1.id.uuid.uuidString) }
    }

    public func renewJobLease(id: JobID, owner: String, now: Date, leaseDuration: Duration) async throws -> Bool {
        try await !rows(
            """
            UPDATE jobs SET lease_expires_at = \(now.adding(leaseDuration)), updated_at = \(now)
            WHERE id = \(id.uuid) AND state = 'running' AND lease_owner = \(owner) AND lease_expires_at > \(now)
            RETURNING id
            """
        ).isEmpty
    }

    public func reserveJobTokens(id: JobID, owner: String, through tokenRowID: Int64?, at: Date) async throws {
        let updated = try await rows(
            PreparedQuery<ReservationShape>(Self.reservation(id: id, owner: owner, through: tokenRowID, at: at))
        )
        guard !updated.isEmpty else { throw StoreError.leaseLost(id) }
    }

    static func reservation(id: JobID, owner: String, through tokenRowID: Int64?, at: Date) -> PostgresQuery {
        """
        UPDATE jobs SET reserved_through = \(tokenRowID)::bigint, updated_at = \(at)
        WHERE id = \(id.uuid) AND state = 'running' AND lease_owner = \(owner) AND lease_expires_at > \(at)
        RETURNING id
        """
    }

    public func completeJob(id: JobID, owner: String, at: Date) async throws {
        let updated = try await rows(
            """
            UPDATE jobs SET state = 'succeeded', lease_owner = NULL, lease_expires_at = NULL, updated_at = \(at)
            WHERE id = \(id.uuid) AND state = 'running' AND lease_owner = \(owner)
            RETURNING id
            """
        )
        guard !updated.isEmpty else { throw StoreError.leaseLost(id) }
    }

    public func failJob(id: JobID, owner: String, error: String, retryAt: Date?, at: Date) async throws {
        let updated = try await rows(
            """
            UPDATE jobs
            SET state = CASE WHEN \(retryAt)::timestamptz IS NULL THEN 'failed' ELSE 'pending' END,
                due_at = COALESCE(\(retryAt)::timestamptz, due_at),
                lease_owner = NULL, lease_expires_at = NULL, last_error = \(error), updated_at = \(at)
            WHERE id = \(id.uuid) AND state = 'running' AND lease_owner = \(owner)
            RETURNING id
            """
        )
        guard !updated.isEmpty else { throw StoreError.leaseLost(id) }
    }

    public func jobs(appID: AppID, kinds: Set<JobKind>?, before: JobListPosition?, limit: Int) async throws -> [Job] {
        let kindNames = kinds.map { $0.map(\.rawValue) }
        return try await rows(
            """
            SELECT \(unescaped: RowMapping.jobColumns(.postgres)) FROM jobs
            WHERE app_id = \(appID.uuid) AND parent_id IS NULL
              AND (\(kindNames == nil) OR kind = ANY(\(kindNames ?? [])))
              AND (\(before == nil) OR (created_at, id) < (\(exactTime: before?.createdAt), \
            \(before?.id.uuid ?? UUID.random())::uuid))
            ORDER BY created_at DESC, id DESC
            LIMIT \(max(1, limit))
            """
        ).mapped(RowMapping.job)
    }

    public func cancelJob(appID: AppID, id: JobID, at: Date) async throws -> Bool {
        // The job and its children in one statement: a worker renewing a child's lease afterwards
        // finds it cancelled and stops. A fan-out whose partitions have all finished is finished,
        // whatever its own row says until the last partition's worker writes it (finishParentJob):
        // its view already reads succeeded or failed, and a cancel in between must not turn it into
        // a cancelled job.
        let cancelled = try await rows(
            """
            UPDATE jobs j SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, updated_at = \(at)
            WHERE j.app_id = \(appID.uuid) AND (j.id = \(id.uuid) OR j.parent_id = \(id.uuid)) AND j.state IN \
            ('pending', 'running')
              AND NOT (j.id = \(id.uuid)
                       AND EXISTS (SELECT 1 FROM jobs c WHERE c.parent_id = j.id)
                       AND NOT EXISTS (SELECT 1 FROM jobs c WHERE c.parent_id = j.id AND c.state IN ('pending', \
            'running')))
            RETURNING j.id
            """
        )
        return try cancelled.contains { try $0.decode(UUID.self) == id.uuid }
    }
}
