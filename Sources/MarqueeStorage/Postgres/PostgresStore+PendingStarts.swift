import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func recordLateJoinOffer(_ offer: LateJoinOffer) async throws {
        try await execute(
            """
            INSERT INTO late_join_offers (event_id, environment, app_id, attributes_type, enabled, everyone, tags, \
            attributes,
                                          content_state, alert, input_push_token, job_id, updated_at)
            SELECT e.id, \(offer.environment.rawValue), e.app_id, \(offer.attributesType), \(offer.enabled), \
            \(offer.everyone),
                   \(ColumnCoding.tags(offer.tags))::jsonb, \(ColumnCoding.json(.object(offer.attributes)))::json,
                   \(ColumnCoding.json(.object(offer.contentState)))::json, \
            \(offer.alert.map { ColumnCoding.json(.object($0)) })::json,
                   \(offer.inputPushToken), \(offer.jobID.uuid), \(offer.updatedAt)
            FROM events e WHERE e.app_id = \(offer.appID.uuid) AND e.id = \(offer.eventID.uuid)
            ON CONFLICT (event_id, environment) DO UPDATE SET
                attributes_type = EXCLUDED.attributes_type, enabled = EXCLUDED.enabled, everyone = EXCLUDED.everyone,
                tags = EXCLUDED.tags, attributes = EXCLUDED.attributes, content_state = EXCLUDED.content_state,
                alert = EXCLUDED.alert, input_push_token = EXCLUDED.input_push_token, job_id = EXCLUDED.job_id,
                updated_at = EXCLUDED.updated_at
            """
        )
    }

    public func lateJoinOffer(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment
    ) async throws -> LateJoinOffer? {
        // The newest accepted broadcast of the event in the environment, over every channel it had
        // there: one probe of broadcast_log_channel per channel.
        try await firstRow(
            """
            SELECT o.event_id, o.environment, o.app_id, o.attributes_type, o.enabled, o.everyone, o.tags::text AS tags,
                   o.attributes::text AS attributes, o.alert::text AS alert, o.input_push_token, o.job_id, o.updated_at,
                   COALESCE(
                     (SELECT l.content_state::text FROM broadcast_log l JOIN channels c ON c.id = l.channel_id
                      WHERE c.app_id = o.app_id AND c.event_id = o.event_id AND c.environment = o.environment
                        AND l.status = 200 AND l.content_state IS NOT NULL
                      ORDER BY l.id DESC LIMIT 1),
                     o.content_state::text) AS content_state
            FROM late_join_offers o
            WHERE o.app_id = \(appID.uuid) AND o.event_id = \(eventID.uuid) AND o.environment = \(environment.rawValue)
            """
        ).mapped(RowMapping.lateJoinOffer)
    }

    public func enqueueLateJoiners(appID: AppID, _ tokens: [RegisteredTokenKey], at: Date) async throws -> Int {
        guard !tokens.isEmpty else { return 0 }
        // One statement: the registered rows, the offers they could match, the events' state and the
        // ledger. A row queued wakes every replica's pump (one NOTIFY per transaction and payload).
        let inserted = try await rows(
            """
            INSERT INTO pending_starts (app_id, event_id, environment, token_id, reason, pending_since)
            SELECT t.app_id, o.event_id, t.environment, t.id, \(PendingStartReason.lateJoin.rawValue), \(at)
            FROM UNNEST(\(tokens.map(\.environment.rawValue))::text[], \(tokens.map(\.attributesType))::text[],
                        \(tokens.map(\.token))::text[]) AS r(environment, attributes_type, token)
            JOIN push_to_start_tokens t
              ON t.app_id = \(appID.uuid) AND t.environment = r.environment AND t.attributes_type = r.attributes_type
             AND t.token = r.token AND t.invalidated_at IS NULL
            JOIN late_join_offers o
              ON o.app_id = t.app_id AND o.environment = t.environment AND o.attributes_type = t.attributes_type AND \
            o.enabled
            JOIN events e ON e.id = o.event_id
            WHERE \(unescaped: RowMapping.eventTakesLateJoiners(environment: "o.environment"))
              AND (o.everyone OR t.tags ?| ARRAY(SELECT jsonb_array_elements_text(o.tags)))
              AND NOT EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = o.event_id AND s.token_id = t.id)
            ON CONFLICT (event_id, token_id) DO NOTHING
            RETURNING id, pg_notify(\(Self.jobsChannel), \(Self.pendingStartsNotification))
            """
        )
        return inserted.count
    }

    /// The payload of the NOTIFY that announces pending starts on the jobs channel.
    public static let pendingStartsNotification = "pending_starts"

    public func prunePendingStarts() async throws -> Int {
        // An end accepted in the pending start's environment: the event takes no starts there any more.
        let ended = RowMapping.endBroadcastAccepted(eventID: "p.event_id", environment: "p.environment")
        return try await rows(
            """
            DELETE FROM pending_starts p
            USING events e, push_to_start_tokens t
            WHERE e.id = p.event_id AND t.id = p.token_id
              AND (e.state IN ('ended', 'cancelled') OR t.invalidated_at IS NOT NULL OR \(unescaped: ended)
                   OR (p.reason = 'late_join'
                       AND (NOT e.late_joiners
                            OR NOT EXISTS (SELECT 1 FROM late_join_offers o WHERE o.event_id = p.event_id AND \
            o.environment = p.environment AND o.enabled)))
                   OR EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = p.event_id AND s.token_id = p.token_id))
            RETURNING p.id
            """
        ).count
    }

    public func claimPendingStarts(owner: String, now: Date, until: Date, limit: Int) async throws -> [PendingStart] {
        let busy = RowMapping.pendingStartBusy(argument: { "j.arguments->>'\($0)'" }, eventIDText: "p.event_id::text")
        return try await rows(
            """
            WITH claimable AS (
                SELECT p.id FROM pending_starts p
                WHERE (p.claimed_until IS NULL OR p.claimed_until <= \(now)) AND NOT \(unescaped: busy)
                ORDER BY p.id
                LIMIT \(max(0, limit))
                FOR UPDATE OF p SKIP LOCKED
            )
            UPDATE pending_starts p SET claim_owner = \(owner), claimed_until = \(until)
            FROM claimable c, push_to_start_tokens t
            WHERE p.id = c.id AND t.id = p.token_id
            RETURNING p.id, p.app_id, p.event_id, p.environment, p.token_id, t.token, p.reason, p.pending_since, \
            p.source_job_id
            """
        ).mapped(RowMapping.pendingStart).sorted { $0.id < $1.id }
    }

    public func enqueueJobs(_ jobs: [Job], consumingPendingStarts ids: [Int64], owner: String, at: Date) async throws {
        try await transaction { connection in
            let removed = try await connection.query(
                """
                DELETE FROM pending_starts
                WHERE id = ANY(\(ids)::bigint[]) AND claim_owner = \(owner) AND claimed_until > \(at)
                RETURNING id
                """,
                logger: logger
            ).collect()
            guard removed.count == Set(ids).count else {
                throw StoreError.notActive(
                    entity: "pending start",
                    id: "claim \(owner)",
                    state: "claimed by another pump or lapsed"
                )
            }
            for job in jobs {
                guard try await !connection.query(Self.insert(job), logger: logger).collect().isEmpty else {
                    throw StoreError.notFound(entity: "app", id: job.appID.description)
                }
            }
        }
    }

    public func dropPendingStarts(_ ids: [Int64], owner: String) async throws {
        try await execute("DELETE FROM pending_starts WHERE id = ANY(\(ids)::bigint[]) AND claim_owner = \(owner)")
    }

    public func pendingStartCount(appID: AppID, eventID: EventID, environment: APNSEnvironment) async throws -> Int {
        let row = try await firstRow(
            """
            SELECT count(*) AS count FROM pending_starts
            WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid) AND environment = \(environment.rawValue)
            """
        )
        return try row.map { try PostgresColumns($0, entity: "pending_starts").int("count") } ?? 0
    }

    public func lateJoinStartCount(appID: AppID, eventID: EventID, environment: APNSEnvironment) async throws -> Int {
        let row = try await firstRow(
            """
            SELECT count(*) AS count FROM start_ledger s JOIN jobs j ON j.id = s.job_id
            WHERE s.app_id = \(appID.uuid) AND s.event_id = \(eventID.uuid)
              AND j.arguments->>'environment' = \(environment.rawValue) AND j.arguments->>'lateJoin' = 'true'
            """
        )
        return try row.map { try PostgresColumns($0, entity: "start_ledger").int("count") } ?? 0
    }
}
