import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func enqueueJob(_ job: Job) async throws {
        try await enqueueJobs([job])
    }

    public func enqueueJobs(_ jobs: [Job]) async throws {
        try await write { connection in
            for job in jobs { try await Self.insert(job, on: connection) }
        }
    }

    /// Inserts the job if its app exists; `StoreError.notFound` otherwise.
    static func insert(_ job: Job, on connection: SQLiteConnection) async throws {
        let inserted = try await connection.query(
            """
            INSERT INTO jobs (id, app_id, kind, parent_id, arguments, due_at, state, attempts, progress_attempted,
                              progress_succeeded, progress_failed, progress_total, progress_retired, \
            progress_downgraded,
                              progress_uncertain, checkpoint, last_error, serial_key, created_at, updated_at)
            SELECT ?, a.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM apps a WHERE a.id = ?
            RETURNING id
            """,
            [
                .id(job.id), .text(job.kind.rawValue), .id(job.parentID), .text(ColumnCoding.json(job.arguments)),
                .date(job.dueAt), .text(job.state.rawValue), .int(job.attempts), .int(job.progress.attempted),
                .int(job.progress.succeeded), .int(job.progress.failed), .int(job.progress.total),
                .int(job.progress.retired), .int(job.progress.downgraded), .int(job.progress.uncertain),
                .text(job.checkpoint), .text(job.lastError),
                .text(job.serialKey), .date(job.createdAt),
                .date(job.updatedAt), .id(job.appID),
            ]
        )
        guard !inserted.isEmpty else { throw StoreError.notFound(entity: "app", id: job.appID.description) }
    }

    public func childJobs(appID: AppID, parentID: JobID) async throws -> [Job] {
        try await query(
            """
            SELECT \(RowMapping.jobColumns(.sqlite)) FROM jobs WHERE app_id = ? AND parent_id = ? ORDER BY \
            created_at, id
            """,
            [.id(appID), .id(parentID)]
        ).mapped(RowMapping.job)
    }

    public func finishParentJob(id: JobID, at: Date) async throws -> JobState? {
        let updated = try await query(
            """
            UPDATE jobs
            SET state = CASE WHEN EXISTS (SELECT 1 FROM jobs c WHERE c.parent_id = ?1 AND c.state = 'failed')
                             THEN 'failed' ELSE 'succeeded' END,
                updated_at = ?2
            WHERE id = ?1 AND state IN ('pending', 'running')
              AND NOT EXISTS (SELECT 1 FROM jobs c WHERE c.parent_id = ?1 AND c.state IN ('pending', 'running'))
            RETURNING state
            """,
            [.id(id), .date(at)]
        )
        return try updated.first.map { try SQLiteColumns($0, entity: "job").string("state") }.flatMap(
            JobState.init(rawValue:)
        )
    }

    public func job(appID: AppID, id: JobID) async throws -> Job? {
        try await query(
            "SELECT \(RowMapping.jobColumns(.sqlite)) FROM jobs WHERE app_id = ? AND id = ?",
            [.id(appID), .id(id)]
        )
        .first.mapped(RowMapping.job)
    }

    public func leaseJobs(
        owner: String,
        kinds: Set<JobKind>?,
        now: Date,
        leaseDuration: Duration,
        limit: Int
    ) async throws -> [Job] {
        // One writer at a time (SerialAccess here, BEGIN IMMEDIATE across processes): the select and
        // the update cannot interleave with another worker's.
        let kindNames = kinds.map { $0.map(\.rawValue).sorted() }
        let kindFilter =
            kindNames.map { names in
                names.isEmpty ? " AND 0" : " AND j.kind IN (\(Self.placeholders(names.count)))"
            } ?? ""
        return try await write { connection in
            let due = try await connection.query(
                """
                WITH lease AS (SELECT ? AS at)
                SELECT j.id FROM jobs j, lease
                WHERE ((j.state = 'pending' AND j.due_at <= lease.at) OR (j.state = 'running' AND j.lease_expires_at \
                <= lease.at))\(kindFilter)
                  AND \(RowMapping.serialKeyIsFree(job: "j", now: "lease.at"))
                ORDER BY j.due_at, j.id
                LIMIT ?
                """,
                [.date(now)] + (kindNames ?? []).map { .text($0) } + [.int(max(1, limit))]
            )
            var leased: [Job] = []
            for row in due {
                let id = try SQLiteColumns(row, entity: "job").uuid("id")
                let updated = try await connection.query(
                    """
                    UPDATE jobs SET state = 'running', lease_owner = ?, lease_expires_at = ?, attempts = attempts + 1,
                                    updated_at = ?
                    WHERE id = ? RETURNING \(RowMapping.jobColumns(.sqlite))
                    """,
                    [.text(owner), .date(now.adding(leaseDuration)), .date(now), .uuid(id)]
                )
                leased += try updated.mapped(RowMapping.job)
            }
            return leased
        }
    }

    public func renewJobLease(id: JobID, owner: String, now: Date, leaseDuration: Duration) async throws -> Bool {
        try await !query(
            """
            UPDATE jobs SET lease_expires_at = ?1, updated_at = ?2
            WHERE id = ?3 AND state = 'running' AND lease_owner = ?4 AND lease_expires_at > ?2 RETURNING id
            """,
            [.date(now.adding(leaseDuration)), .date(now), .id(id), .text(owner)]
        ).isEmpty
    }

    public func reserveJobTokens(id: JobID, owner: String, through tokenRowID: Int64?, at: Date) async throws {
        let updated = try await query(
            """
            UPDATE jobs SET reserved_through = ?1, updated_at = ?2
            WHERE id = ?3 AND state = 'running' AND lease_owner = ?4 AND lease_expires_at > ?2 RETURNING id
            """,
            [.int(tokenRowID), .date(at), .id(id), .text(owner)]
        )
        guard !updated.isEmpty else { throw StoreError.leaseLost(id) }
    }

    public func completeJob(id: JobID, owner: String, at: Date) async throws {
        let updated = try await query(
            """
            UPDATE jobs SET state = 'succeeded', lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
            WHERE id = ? AND state = 'running' AND lease_owner = ? RETURNING id
            """,
            [.date(at), .id(id), .text(owner)]
        )
        guard !updated.isEmpty else { throw StoreError.leaseLost(id) }
    }

    public func failJob(id: JobID, owner: String, error: String, retryAt: Date?, at: Date) async throws {
        let updated = try await query(
            """
            UPDATE jobs
            SET state = CASE WHEN ?1 IS NULL THEN 'failed' ELSE 'pending' END, due_at = COALESCE(?1, due_at),
                lease_owner = NULL, lease_expires_at = NULL, last_error = ?2, updated_at = ?3
            WHERE id = ?4 AND state = 'running' AND lease_owner = ?5 RETURNING id
            """,
            [.date(retryAt), .text(error), .date(at), .id(id), .text(owner)]
        )
        guard !updated.isEmpty else { throw StoreError.leaseLost(id) }
    }

    public func jobs(appID: AppID, kinds: Set<JobKind>?, before: JobListPosition?, limit: Int) async throws -> [Job] {
        let kindNames = kinds.map { $0.map(\.rawValue).sorted() }
        return try await query(
            """
            SELECT \(RowMapping.jobColumns(.sqlite)) FROM jobs
            WHERE app_id = ?1 AND parent_id IS NULL
              AND (?2 IS NULL OR kind IN (SELECT value FROM json_each(?2)))
              AND (?3 IS NULL OR created_at < ?3 OR (created_at = ?3 AND id < ?4))
            ORDER BY created_at DESC, id DESC
            LIMIT ?5
            """,
            [
                .id(appID), kindNames.map { .jsonList($0) } ?? .null,
                .date(before?.createdAt), .id(before?.id), .int(max(1, limit)),
            ]
        ).mapped(RowMapping.job)
    }

    public func cancelJob(appID: AppID, id: JobID, at: Date) async throws -> Bool {
        // As PostgresStore's: a fan-out whose partitions have all finished is not cancelled.
        let cancelled = try await query(
            """
            UPDATE jobs SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, updated_at = ?1
            WHERE app_id = ?2 AND (id = ?3 OR parent_id = ?3) AND state IN ('pending', 'running')
              AND NOT (id = ?3
                       AND EXISTS (SELECT 1 FROM jobs c WHERE c.parent_id = ?3)
                       AND NOT EXISTS (SELECT 1 FROM jobs c WHERE c.parent_id = ?3 AND c.state IN ('pending', \
            'running')))
            RETURNING id
            """,
            [.date(at), .id(appID), .id(id)]
        )
        return try cancelled.contains { try SQLiteColumns($0, entity: "job").uuid("id") == id.uuid }
    }
}
