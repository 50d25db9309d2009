import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    /// Rows per statement: 9 parameters each, far below SQLite's 32,766-parameter limit.
    static let upsertChunkSize = 1_000

    public func upsertPushToStartTokens(
        appID: AppID,
        _ registrations: [PushToStartRegistration],
        at: Date
    ) async throws -> Int {
        let unique = ColumnCoding.deduplicated(registrations)
        guard !unique.isEmpty else { return 0 }
        return try await write { connection in
            try await Self.upsert(appID: appID, unique, at: at, on: connection)
            return unique.count
        }
    }

    /// Within a write transaction: the app's rows for `unique` (deduplicated) inserted or refreshed,
    /// rotated devices' rows first; `notFound` if the app is gone.
    static func upsert(
        appID: AppID,
        _ unique: [PushToStartRegistration],
        at: Date,
        on connection: SQLiteConnection
    ) async throws {
        guard try await !connection.query("SELECT 1 FROM apps WHERE id = ?", [.id(appID)]).isEmpty else {
            throw StoreError.notFound(entity: "app", id: appID.description)
        }
        // Rotated devices' rows take their new tokens first: the upsert below then refreshes
        // them in place like any known token.
        try await rotateDevices(appID: appID, unique, at: at, on: connection)
        var start = 0
        while start < unique.count {
            let chunk = unique[start..<min(start + upsertChunkSize, unique.count)]
            start += chunk.count
            var binds: [SQLiteData] = [.id(appID), .date(at)]
            binds.reserveCapacity(2 + chunk.count * 9)
            for registration in chunk {
                binds += [
                    .text(registration.environment.rawValue), .text(registration.attributesType),
                    .text(registration.token), .text(registration.deviceID), .text(registration.userID),
                    .text(ColumnCoding.tags(registration.tags)), .text(registration.iosVersion),
                    .bool(registration.frequentPushesEnabled), .text(registration.deviceToken),
                ]
            }
            // ?1 is the app and ?2 the time in every row; each row's own values follow, numbered.
            let values = (0..<chunk.count).map { row in
                let first = 3 + row * 9
                let own = (first..<(first + 8)).map { "?\($0)" }.joined(separator: ", ")
                return "(?1, \(own), ?2, ?2, ?\(first + 8))"
            }.joined(separator: ", ")
            _ = try await connection.query(
                """
                INSERT INTO push_to_start_tokens
                    (app_id, environment, attributes_type, token, device_id, user_id, tags, ios_version,
                     frequent_pushes_enabled, first_registered_at, last_registered_at, device_token)
                VALUES \(values)
                ON CONFLICT (app_id, environment, attributes_type, token) DO UPDATE SET
                    device_id = excluded.device_id,
                    user_id = excluded.user_id,
                    tags = excluded.tags,
                    ios_version = excluded.ios_version,
                    frequent_pushes_enabled = excluded.frequent_pushes_enabled,
                    last_registered_at = MAX(last_registered_at, excluded.last_registered_at),
                    device_token = COALESCE(excluded.device_token, device_token),
                    invalidated_at = NULL,
                    invalidation_reason = NULL
                """,
                binds
            )
        }
    }

    public func registerPushToStartTokens(
        appID: AppID,
        _ registrations: [PushToStartRegistration],
        at: Date,
        returningTokens: Bool
    ) async throws -> TokenRegistrationOutcome {
        let unique = ColumnCoding.deduplicated(registrations)
        guard !unique.isEmpty else { return TokenRegistrationOutcome(written: 0, lateJoinersQueued: 0) }
        let keys = unique.map(\.tokenKey)
        // One write transaction: the database has one writer, so there are no round trips to save,
        // only the unit to keep.
        return try await write { connection in
            try await Self.upsert(appID: appID, unique, at: at, on: connection)
            var outcome = TokenRegistrationOutcome(
                written: unique.count,
                lateJoinersQueued: try await Self.enqueueLateJoiners(appID: appID, keys, at: at, on: connection)
            )
            if returningTokens {
                outcome.tokens = try await connection.query(
                    """
                    SELECT \(RowMapping.tokenColumns(.sqlite)) FROM push_to_start_tokens
                    WHERE app_id = ? AND (environment, attributes_type, token) IN (
                        SELECT json_extract(r.value, '$[0]'), json_extract(r.value, '$[1]'),
                               json_extract(r.value, '$[2]')
                        FROM json_each(?) r)
                    """,
                    [.id(appID), .text(Self.keyList(keys))]
                ).mapped(RowMapping.token)
            }
            return outcome
        }
    }

    public func pushToStartToken(
        appID: AppID,
        environment: APNSEnvironment,
        attributesType: String,
        token: String
    ) async throws -> PushToStartToken? {
        try await query(
            """
            SELECT \(RowMapping.tokenColumns(.sqlite)) FROM push_to_start_tokens
            WHERE app_id = ? AND environment = ? AND attributes_type = ? AND token = ?
            """,
            [.id(appID), .text(environment.rawValue), .text(attributesType), .text(token)]
        ).first.mapped(RowMapping.token)
    }

    public func deletePushToStartToken(
        appID: AppID,
        environment: APNSEnvironment,
        attributesType: String,
        token: String
    ) async throws -> Bool {
        // Deliveries and start-ledger rows go with it (ON DELETE CASCADE); activities keep their
        // row and lose the reference (ON DELETE SET NULL).
        try await !query(
            """
            DELETE FROM push_to_start_tokens
            WHERE app_id = ? AND environment = ? AND attributes_type = ? AND token = ?
            RETURNING id
            """,
            [.id(appID), .text(environment.rawValue), .text(attributesType), .text(token)]
        ).isEmpty
    }

    public func deviceTokens(appID: AppID, tokenRowIDs: [Int64]) async throws -> [Int64: String] {
        guard !tokenRowIDs.isEmpty else { return [:] }
        let rows = try await query(
            """
            SELECT id, device_token FROM push_to_start_tokens
            WHERE app_id = ? AND id IN (SELECT value FROM json_each(?)) AND device_token IS NOT NULL
            """,
            [.id(appID), .jsonList(tokenRowIDs)]
        )
        var found: [Int64: String] = [:]
        for row in rows {
            let columns = SQLiteColumns(row, entity: "push-to-start token")
            found[try columns.int64("id")] = try columns.string("device_token")
        }
        return found
    }

    public func invalidatePushToStartToken(
        appID: AppID,
        rowID: Int64,
        _ invalidation: TokenInvalidation
    ) async throws -> Bool {
        try await access.withAccess {
            try await Self.invalidate(on: connection, appID: appID, rowID: rowID, invalidation)
        }
    }

    /// TokenInvalidation.retires(tokenLastRegisteredAt:), evaluated against the row as it is now.
    static func invalidate(
        on connection: SQLiteConnection,
        appID: AppID,
        rowID: Int64,
        _ invalidation: TokenInvalidation
    ) async throws -> Bool {
        try await !connection.query(
            """
            UPDATE push_to_start_tokens SET invalidated_at = ?1, invalidation_reason = ?2
            WHERE app_id = ?3 AND id = ?4 AND invalidated_at IS NULL AND last_registered_at < ?1
              AND (?5 IS NULL OR token = ?5)
            RETURNING id
            """,
            [
                .date(invalidation.invalidSince), .text(invalidation.reason.reasonString), .id(appID), .int(rowID),
                .text(invalidation.token),
            ]
        ).isEmpty
    }

    public func audiencePage(_ query: AudienceQuery, after cursor: Int64, limit: Int) async throws -> [PushToStartToken]
    {
        let (filter, binds) = Self.audienceFilter(query, after: cursor)
        return try await self.query(
            """
            SELECT \(RowMapping.tokenColumns(.sqlite)) FROM push_to_start_tokens t WHERE \(filter) ORDER BY t.id \
            LIMIT ?\(binds.count + 1)
            """,
            binds + [.int(max(1, limit))]
        ).mapped(RowMapping.token)
    }

    public func audienceRecipients(
        _ query: AudienceQuery,
        after cursor: Int64,
        limit: Int
    ) async throws -> [AudienceRecipient] {
        let (filter, binds) = Self.audienceFilter(query, after: cursor)
        return try await self.query(
            """
            SELECT \(RowMapping.audienceRecipientColumns) FROM push_to_start_tokens t WHERE \(filter) ORDER BY \
            t.id LIMIT ?\(binds.count + 1)
            """,
            binds + [.int(max(1, limit))]
        ).mapped { row in
            AudienceRecipient(
                rowID: try row.int64("id"),
                token: try row.string("token"),
                iosVersion: try row.optionalString("ios_version")
            )
        }
    }

    public func audienceExtent(_ query: AudienceQuery) async throws -> AudienceExtent {
        let (filter, binds) = Self.audienceFilter(query, after: 0)
        let rows = try await self.query(
            """
            SELECT count(*) AS count, min(t.id) AS first, max(t.id) AS last FROM push_to_start_tokens t WHERE \
            \(filter)
            """,
            binds
        )
        guard let row = rows.first else { return AudienceExtent(count: 0, rowIDs: nil) }
        let columns = SQLiteColumns(row, entity: "push-to-start token")
        let first = try columns.optionalInt64("first")
        let last = try columns.optionalInt64("last")
        return AudienceExtent(
            count: try columns.int64("count"),
            rowIDs: first.flatMap { first in last.map { first...$0 } }
        )
    }

    /// The audience's conditions on `t`, with binds ?1 to ?13.
    static func audienceFilter(_ query: AudienceQuery, after cursor: Int64) -> (String, [SQLiteData]) {
        let list = { (values: [String]) -> SQLiteData in
            values.isEmpty ? .null : .jsonList(values)
        }
        let filter = """
            t.app_id = ?1 AND t.environment = ?2 AND t.attributes_type = ?3 AND t.invalidated_at IS NULL
              AND t.id > ?4
              AND (?5 IS NULL OR EXISTS (SELECT 1 FROM json_each(t.tags) WHERE json_each.value = ?5))
              AND (?6 IS NULL OR NOT EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = ?6 AND s.token_id = t.id))
              AND (?7 IS NULL OR EXISTS (
                    SELECT 1 FROM json_each(t.tags) a, json_each(?7) b WHERE a.value = b.value))
              AND (?8 IS NULL OR t.user_id IN (SELECT value FROM json_each(?8)))
              AND (?9 IS NULL OR t.token IN (SELECT value FROM json_each(?9)))
              AND (?10 IS NULL OR NOT EXISTS (
                    SELECT 1 FROM deliveries d WHERE d.job_id = ?10 AND d.token_id = t.id AND d.outcome <> 'failed'))
              AND (?11 IS NULL OR t.id > ?11)
              AND (?12 IS NULL OR t.id <= ?12)
              AND (?13 IS NULL OR t.id IN (
                    SELECT d.token_id FROM deliveries d
                    WHERE d.job_id IN (SELECT j.id FROM jobs j WHERE j.id = ?13 OR j.parent_id = ?13) AND d.outcome = \
            'uncertain'))
            """
        return (
            filter,
            [
                .id(query.appID), .text(query.environment.rawValue), .text(query.attributesType), .int(cursor),
                .text(query.tag), .id(query.excludingStartsOf), list(query.anyTags), list(query.userIDs),
                list(query.tokens), .id(query.excludingFinalOutcomesOf), .int(query.partition?.afterRowID),
                .int(query.partition?.throughRowID), .id(query.uncertainIn),
            ]
        )
    }
}
