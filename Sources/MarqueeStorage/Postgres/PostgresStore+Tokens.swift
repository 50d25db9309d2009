import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    /// Rows per statement: each chunk is one `INSERT ... SELECT FROM UNNEST(...)` with nine array
    /// parameters, whatever its size (`registration`).
    static let upsertChunkSize = 10_000

    public func upsertPushToStartTokens(
        appID: AppID,
        _ registrations: [PushToStartRegistration],
        at: Date
    ) async throws -> Int {
        let unique = ColumnCoding.deduplicated(registrations)
        guard !unique.isEmpty else { return 0 }
        return try await registerRotatingDevices(appID: appID, unique, at: at, options: [], returningTokens: false)
            .written
    }

    public func pushToStartToken(
        appID: AppID,
        environment: APNSEnvironment,
        attributesType: String,
        token: String
    ) async throws -> PushToStartToken? {
        try await firstRow(
            """
            SELECT \(unescaped: RowMapping.tokenColumns(.postgres)) FROM push_to_start_tokens
            WHERE app_id = \(appID.uuid) AND environment = \(environment.rawValue)
              AND attributes_type = \(attributesType) AND token = \(token)
            """
        ).mapped(RowMapping.token)
    }

    public func deletePushToStartToken(
        appID: AppID,
        environment: APNSEnvironment,
        attributesType: String,
        token: String
    ) async throws -> Bool {
        // Deliveries go with it (ON DELETE CASCADE); activities keep their row and lose the
        // reference (ON DELETE SET NULL). Its start-ledger entries are deleted by the next
        // statement (the ledger has no foreign keys, migration 0009). A fan-out batch committing
        // at the same moment may still write one (StartLedgerInsert does not hold the token):
        // nothing reads it, and it goes with its event.
        try await transaction { connection in
            let deleted = try await connection.query(
                """
                DELETE FROM push_to_start_tokens
                WHERE app_id = \(appID.uuid) AND environment = \(environment.rawValue)
                  AND attributes_type = \(attributesType) AND token = \(token)
                RETURNING id
                """,
                logger: logger
            ).collect()
            guard let row = deleted.first else { return false }
            let rowID = try row.decode(Int64.self)
            try await connection.query(Self.deleteLedgerEntries(appID: appID, tokenRow: rowID), logger: logger)
            return true
        }
    }

    /// Deletes the start-ledger entries of `appID`'s token row `tokenRow`: found event by event of
    /// the app through the primary key, as the ledger has no index on its tokens (migration 0021).
    static func deleteLedgerEntries(appID: AppID, tokenRow: Int64) -> PostgresQuery {
        """
        DELETE FROM start_ledger
        WHERE event_id IN (SELECT id FROM events WHERE app_id = \(appID.uuid)) AND token_id = \(tokenRow)
        """
    }

    public func deviceTokens(appID: AppID, tokenRowIDs: [Int64]) async throws -> [Int64: String] {
        guard !tokenRowIDs.isEmpty else { return [:] }
        var found: [Int64: String] = [:]
        for row in try await rows(
            """
            SELECT id, device_token FROM push_to_start_tokens
            WHERE app_id = \(appID.uuid) AND id = ANY(\(tokenRowIDs)::bigint[]) AND device_token IS NOT NULL
            """
        ) {
            let (rowID, deviceToken) = try row.decode((Int64, String).self)
            found[rowID] = deviceToken
        }
        return found
    }

    public func invalidatePushToStartToken(
        appID: AppID,
        rowID: Int64,
        _ invalidation: TokenInvalidation
    ) async throws -> Bool {
        try await !rows(Self.invalidation(appID: appID, rowID: rowID, invalidation)).isEmpty
    }

    /// TokenInvalidation.retires(tokenLastRegisteredAt:), evaluated against the row as it is now.
    static func invalidation(appID: AppID, rowID: Int64, _ invalidation: TokenInvalidation) -> PostgresQuery {
        """
        UPDATE push_to_start_tokens
        SET invalidated_at = \(invalidation.invalidSince), invalidation_reason = \(invalidation.reason.reasonString)
        WHERE app_id = \(appID.uuid) AND id = \(rowID) AND invalidated_at IS NULL
          AND last_registered_at < \(invalidation.invalidSince)
          AND (\(invalidation.token)::text IS NULL OR token = \(invalidation.token))
        RETURNING id
        """
    }

    public func audiencePage(_ query: AudienceQuery, after cursor: Int64, limit: Int) async throws -> [PushToStartToken]
    {
        try await rows(
            Self.audience(
                query,
                select: "SELECT \(RowMapping.tokenColumns(.postgres)) FROM push_to_start_tokens t",
                after: cursor,
                tail: "ORDER BY t.id LIMIT \(max(1, limit))"
            )
        ).mapped(RowMapping.token)
    }

    public func audienceRecipients(
        _ query: AudienceQuery,
        after cursor: Int64,
        limit: Int
    ) async throws -> [AudienceRecipient] {
        // The page comes as one row of arrays, not a row per token: PostgresNIO's work per row (its
        // message parsed, carried through the query's state machine and row stream, decoded as a
        // tuple) was most of what a start fan-out spent reading its audience. Arrays cannot carry
        // NULL through PostgresNIO, so a version's absence is its own array.
        let result = try await rows(
            Self.audience(
                query,
                select: """
                    SELECT array_agg(p.id ORDER BY p.id), array_agg(p.token ORDER BY p.id),
                           array_agg(p.ios_version ORDER BY p.id), array_agg(p.no_version ORDER BY p.id)
                    FROM (SELECT t.id, t.token, COALESCE(t.ios_version, '') AS ios_version,
                                 t.ios_version IS NULL AS no_version
                          FROM push_to_start_tokens t
                    """,
                after: cursor,
                tail: "ORDER BY t.id LIMIT \(max(1, limit))) p"
            )
        )
        // No row of the page: each aggregate is NULL.
        guard let row = result.first else { return [] }
        let (rowIDs, tokens, versions, noVersions) = try row.decode(([Int64]?, [String]?, [String]?, [Bool]?).self)
        guard let rowIDs else { return [] }
        guard let tokens, let versions, let noVersions,
            tokens.count == rowIDs.count, versions.count == rowIDs.count, noVersions.count == rowIDs.count
        else {
            throw StoreError.corruptRow(
                entity: "push_to_start_tokens",
                detail: "an audience page's arrays differ in length"
            )
        }
        var recipients: [AudienceRecipient] = []
        recipients.reserveCapacity(rowIDs.count)
        for index in rowIDs.indices {
            recipients.append(
                AudienceRecipient(
                    rowID: rowIDs[index],
                    token: tokens[index],
                    iosVersion: noVersions[index] ? nil : versions[index]
                )
            )
        }
        return recipients
    }

    public func audienceExtent(_ query: AudienceQuery) async throws -> AudienceExtent {
        let result = try await wholeAudienceRows(
            Self.audience(
                query,
                select: "SELECT count(*), min(t.id), max(t.id) FROM push_to_start_tokens t",
                after: 0,
                tail: ""
            )
        )
        for row in result {
            let (count, first, last) = try row.decode((Int64, Int64?, Int64?).self)
            return AudienceExtent(count: count, rowIDs: first.flatMap { first in last.map { first...$0 } })
        }
        return AudienceExtent(count: 0, rowIDs: nil)
    }

    /// The audience's rows after `cursor`. Optional filters are written as `param IS NULL OR ...`
    /// (or a flag for lists): PostgresNIO plans each execution with its values, so an absent filter
    /// costs nothing. The `OFFSET 0` in each `NOT EXISTS` keeps it a probe of one index entry per
    /// row: as an anti-join, with statistics that had seen the ledger, PostgreSQL hashed every
    /// ledger entry of the event for each page, which grew with the fan-out (221 ms a page at
    /// 300,000 tokens instead of 7.5). Before any row is probed, one uncorrelated look (a plan's
    /// InitPlan, run once per execution) asks whether the event has a ledger entry at all in the
    /// rows still ahead; mostly it has none (a new event's count, a partition's pages ahead of what
    /// it sent) and the per-row probes are skipped: at 300,000 tokens they were the whole of the
    /// 421 ms the audience's count took when the job was created.
    static func audience(_ query: AudienceQuery, select: String, after cursor: Int64, tail: String) -> PostgresQuery {
        """
        \(unescaped: select)
        WHERE t.app_id = \(query.appID.uuid) AND t.environment = \(query.environment.rawValue)
          AND t.attributes_type = \(query.attributesType) AND t.invalidated_at IS NULL AND t.id > \(cursor)
          AND (\(query.tag)::text IS NULL OR t.tags @> jsonb_build_array(\(query.tag)::text))
          AND (\(query.anyTags.isEmpty) OR t.tags ?| \(query.anyTags)::text[])
          AND (\(query.userIDs.isEmpty) OR t.user_id = ANY(\(query.userIDs)::text[]))
          AND (\(query.tokens.isEmpty) OR t.token = ANY(\(query.tokens)::text[]))
          AND (\(query.excludingStartsOf?.uuid)::uuid IS NULL
               OR NOT EXISTS (
                SELECT 1 FROM start_ledger s WHERE s.event_id = \(query.excludingStartsOf?.uuid) AND s.token_id > \
        \(cursor)
                  AND (\(query.partition?.afterRowID)::bigint IS NULL OR s.token_id > \(query.partition?.afterRowID))
                  AND (\(query.partition?.throughRowID)::bigint IS NULL OR s.token_id <= \
        \(query.partition?.throughRowID)))
               OR NOT EXISTS (
                SELECT 1 FROM start_ledger s WHERE s.event_id = \(query.excludingStartsOf?.uuid) AND s.token_id = \
        t.id OFFSET 0))
          AND (\(query.excludingFinalOutcomesOf?.uuid)::uuid IS NULL OR NOT EXISTS (
                SELECT 1 FROM deliveries d
                WHERE d.job_id = \(query.excludingFinalOutcomesOf?.uuid) AND d.token_id = t.id AND d.outcome <> \
        'failed' OFFSET 0))
          AND (\(query.partition?.afterRowID)::bigint IS NULL OR t.id > \(query.partition?.afterRowID))
          AND (\(query.partition?.throughRowID)::bigint IS NULL OR t.id <= \(query.partition?.throughRowID))
          AND (\(query.uncertainIn?.uuid)::uuid IS NULL OR t.id IN (
                SELECT d.token_id FROM deliveries d
                WHERE d.job_id IN (SELECT j.id FROM jobs j WHERE j.id = \(query.uncertainIn?.uuid) OR j.parent_id = \
        \(query.uncertainIn?.uuid))
                  AND d.outcome = 'uncertain'))
        \(unescaped: tail)
        """
    }
}
