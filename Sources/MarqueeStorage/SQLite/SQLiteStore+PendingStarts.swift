import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func recordLateJoinOffer(_ offer: LateJoinOffer) async throws {
        _ = try await query(
            """
            INSERT INTO late_join_offers (event_id, environment, app_id, attributes_type, enabled, everyone, tags, \
            attributes,
                                          content_state, alert, input_push_token, job_id, updated_at)
            SELECT e.id, ?, e.app_id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM events e WHERE e.app_id = ? AND e.id = ?
            ON CONFLICT (event_id, environment) DO UPDATE SET
                attributes_type = excluded.attributes_type, enabled = excluded.enabled, everyone = excluded.everyone,
                tags = excluded.tags, attributes = excluded.attributes, content_state = excluded.content_state,
                alert = excluded.alert, input_push_token = excluded.input_push_token, job_id = excluded.job_id,
                updated_at = excluded.updated_at
            """,
            [
                .text(offer.environment.rawValue), .text(offer.attributesType), .bool(offer.enabled),
                .bool(offer.everyone),
                .text(ColumnCoding.tags(offer.tags)), .text(ColumnCoding.json(.object(offer.attributes))),
                .text(ColumnCoding.json(.object(offer.contentState))),
                .text(offer.alert.map { ColumnCoding.json(.object($0)) }),
                .bool(offer.inputPushToken), .id(offer.jobID), .date(offer.updatedAt), .id(offer.appID),
                .id(offer.eventID),
            ]
        )
    }

    public func lateJoinOffer(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment
    ) async throws -> LateJoinOffer? {
        try await query(
            """
            SELECT o.event_id, o.environment, o.app_id, o.attributes_type, o.enabled, o.everyone, o.tags, \
            o.attributes, o.alert,
                   o.input_push_token, o.job_id, o.updated_at,
                   COALESCE(
                     (SELECT l.content_state FROM broadcast_log l JOIN channels c ON c.id = l.channel_id
                      WHERE c.app_id = o.app_id AND c.event_id = o.event_id AND c.environment = o.environment
                        AND l.status = 200 AND l.content_state IS NOT NULL
                      ORDER BY l.id DESC LIMIT 1),
                     o.content_state) AS content_state
            FROM late_join_offers o WHERE o.app_id = ? AND o.event_id = ? AND o.environment = ?
            """,
            [.id(appID), .id(eventID), .text(environment.rawValue)]
        ).first.mapped(RowMapping.lateJoinOffer)
    }

    public func enqueueLateJoiners(appID: AppID, _ tokens: [RegisteredTokenKey], at: Date) async throws -> Int {
        guard !tokens.isEmpty else { return 0 }
        return try await write { connection in
            try await Self.enqueueLateJoiners(appID: appID, tokens, at: at, on: connection)
        }
    }

    /// The registrations' tokens as a JSON array of `[environment, attributes type, token]`.
    static func keyList(_ tokens: [RegisteredTokenKey]) -> String {
        ColumnCoding.json(
            .array(
                tokens.map {
                    .array([.string($0.environment.rawValue), .string($0.attributesType), .string($0.token)])
                }
            )
        )
    }

    /// `enqueueLateJoiners` within the caller's write transaction.
    static func enqueueLateJoiners(
        appID: AppID,
        _ tokens: [RegisteredTokenKey],
        at: Date,
        on connection: SQLiteConnection
    ) async throws -> Int {
        guard !tokens.isEmpty else { return 0 }
        return try await connection.query(
            """
            INSERT INTO pending_starts (app_id, event_id, environment, token_id, reason, pending_since)
            SELECT t.app_id, o.event_id, t.environment, t.id, ?, ?
            FROM json_each(?) r
            JOIN push_to_start_tokens t
              ON t.app_id = ? AND t.environment = json_extract(r.value, '$[0]') AND t.attributes_type = \
            json_extract(r.value, '$[1]')
             AND t.token = json_extract(r.value, '$[2]') AND t.invalidated_at IS NULL
            JOIN late_join_offers o
              ON o.app_id = t.app_id AND o.environment = t.environment AND o.attributes_type = t.attributes_type AND \
            o.enabled = 1
            JOIN events e ON e.id = o.event_id
            WHERE \(RowMapping.eventTakesLateJoiners(environment: "o.environment"))
              AND (o.everyone OR EXISTS (SELECT 1 FROM json_each(t.tags) a, json_each(o.tags) b WHERE a.value = \
            b.value))
              AND NOT EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = o.event_id AND s.token_id = t.id)
            ON CONFLICT (event_id, token_id) DO NOTHING
            RETURNING id
            """,
            [.text(PendingStartReason.lateJoin.rawValue), .date(at), .text(keyList(tokens)), .id(appID)]
        ).count
    }

    public func prunePendingStarts() async throws -> Int {
        // An end accepted in the pending start's environment: the event takes no starts there any more.
        let ended = RowMapping.endBroadcastAccepted(eventID: "p.event_id", environment: "p.environment")
        return try await query(
            """
            DELETE FROM pending_starts AS p
            WHERE EXISTS (
                SELECT 1 FROM events e, push_to_start_tokens t
                WHERE e.id = p.event_id AND t.id = p.token_id
                  AND (e.state IN ('ended', 'cancelled') OR t.invalidated_at IS NOT NULL OR \(ended)
                       OR (p.reason = 'late_join'
                           AND (NOT e.late_joiners
                                OR NOT EXISTS (SELECT 1 FROM late_join_offers o WHERE o.event_id = p.event_id AND \
            o.environment = p.environment AND o.enabled = 1)))
                       OR EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = p.event_id AND s.token_id = \
            p.token_id)))
            RETURNING id
            """
        ).count
    }

    public func claimPendingStarts(owner: String, now: Date, until: Date, limit: Int) async throws -> [PendingStart] {
        let busy = RowMapping.pendingStartBusy(
            argument: { "json_extract(j.arguments, '$.\($0)')" },
            eventIDText: "p.event_id"
        )
        // One writer at a time: the claim is the UPDATE's own subquery. (SQLite's RETURNING sees
        // only the updated table, so the tokens are read after it, in the same transaction.)
        return try await write { connection in
            let claimed = try await connection.query(
                """
                UPDATE pending_starts SET claim_owner = ?1, claimed_until = ?2
                WHERE id IN (
                    SELECT p.id FROM pending_starts p
                    WHERE (p.claimed_until IS NULL OR p.claimed_until <= ?3) AND NOT \(busy)
                    ORDER BY p.id LIMIT ?4)
                RETURNING id
                """,
                [.text(owner), .date(until), .date(now), .int(max(0, limit))]
            )
            guard !claimed.isEmpty else { return [] }
            return try await connection.query(
                """
                SELECT p.id, p.app_id, p.event_id, p.environment, p.token_id, t.token, p.reason, p.pending_since, \
                p.source_job_id
                FROM pending_starts p JOIN push_to_start_tokens t ON t.id = p.token_id
                WHERE p.claim_owner = ? ORDER BY p.id
                """,
                [.text(owner)]
            ).mapped(RowMapping.pendingStart)
        }
    }

    public func enqueueJobs(_ jobs: [Job], consumingPendingStarts ids: [Int64], owner: String, at: Date) async throws {
        try await write { connection in
            let removed = try await connection.query(
                """
                DELETE FROM pending_starts
                WHERE id IN (SELECT value FROM json_each(?)) AND claim_owner = ? AND claimed_until > ?
                RETURNING id
                """,
                [.jsonList(ids), .text(owner), .date(at)]
            )
            guard removed.count == Set(ids).count else {
                throw StoreError.notActive(
                    entity: "pending start",
                    id: "claim \(owner)",
                    state: "claimed by another pump or lapsed"
                )
            }
            for job in jobs { try await Self.insert(job, on: connection) }
        }
    }

    public func dropPendingStarts(_ ids: [Int64], owner: String) async throws {
        _ = try await query(
            "DELETE FROM pending_starts WHERE id IN (SELECT value FROM json_each(?)) AND claim_owner = ?",
            [.jsonList(ids), .text(owner)]
        )
    }

    public func pendingStartCount(appID: AppID, eventID: EventID, environment: APNSEnvironment) async throws -> Int {
        let row = try await query(
            "SELECT count(*) AS count FROM pending_starts WHERE app_id = ? AND event_id = ? AND environment = ?",
            [.id(appID), .id(eventID), .text(environment.rawValue)]
        ).first
        return try row.map { try SQLiteColumns($0, entity: "pending_starts").int("count") } ?? 0
    }

    public func lateJoinStartCount(appID: AppID, eventID: EventID, environment: APNSEnvironment) async throws -> Int {
        let row = try await query(
            """
            SELECT count(*) AS count FROM start_ledger s JOIN jobs j ON j.id = s.job_id
            WHERE s.app_id = ? AND s.event_id = ?
              AND json_extract(j.arguments, '$.environment') = ? AND json_extract(j.arguments, '$.lateJoin') = 1
            """,
            [.id(appID), .id(eventID), .text(environment.rawValue)]
        ).first
        return try row.map { try SQLiteColumns($0, entity: "start_ledger").int("count") } ?? 0
    }
}
