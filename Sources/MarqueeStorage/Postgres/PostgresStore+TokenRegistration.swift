import Foundation
import Logging
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func registerPushToStartTokens(
        appID: AppID,
        _ registrations: [PushToStartRegistration],
        at: Date,
        returningTokens: Bool
    ) async throws -> TokenRegistrationOutcome {
        let unique = ColumnCoding.deduplicated(registrations)
        guard !unique.isEmpty else { return TokenRegistrationOutcome(written: 0, lateJoinersQueued: 0) }
        if unique.count <= Self.upsertChunkSize {
            // The common case in one round trip: the statement writes nothing when a registration
            // would rotate a device's row, and then the transaction below does the whole batch.
            let statement = Self.registration(
                appID: appID,
                unique[...],
                at: at,
                options: [.queueLateJoiners, .refuseRotations],
                returningTokens: returningTokens
            )
            let outcome = try await Self.mappingUnknownApp(appID) {
                try await Self.registrationOutcome(
                    self.rows(PreparedRegistration(statement)),
                    returningTokens: returningTokens
                )
            }
            if let outcome { return outcome }
        }
        return try await registerRotatingDevices(
            appID: appID,
            unique,
            at: at,
            options: [.queueLateJoiners],
            returningTokens: returningTokens
        )
    }

    /// The registration of `unique` (deduplicated) in one transaction that first rotates the
    /// devices' rows (`rotateDevices`): the statements then refresh them in place like any known
    /// token. The app's row is held shared, so the app cannot go while its tokens are written.
    func registerRotatingDevices(
        appID: AppID,
        _ unique: [PushToStartRegistration],
        at: Date,
        options: RegistrationOptions,
        returningTokens: Bool
    ) async throws -> TokenRegistrationOutcome {
        try await transaction { connection in
            guard
                try await connection.rows(PreparedQuery<AppHoldShape>(Self.holdApp(appID)), logger: logger).count == 1
            else { throw StoreError.notFound(entity: "app", id: appID.description) }
            try await Self.rotateDevices(appID: appID, unique, at: at, on: connection, logger: logger)
            return try await Self.register(
                appID: appID,
                unique,
                at: at,
                options: options,
                returningTokens: returningTokens,
                on: connection,
                logger: logger
            )
        }
    }

    /// Holds the app's row shared for the transaction, so that the app cannot go while its tokens
    /// are written; one row when the app exists (`AppHoldShape`).
    static func holdApp(_ appID: AppID) -> PostgresQuery {
        "SELECT 1 FROM apps WHERE id = \(appID.uuid) FOR SHARE"
    }

    /// What a registration statement does besides the upsert.
    struct RegistrationOptions: OptionSet {
        let rawValue: Int
        /// Queue the written tokens as late joiners (`enqueueLateJoiners`), from the rows written.
        static let queueLateJoiners = RegistrationOptions(rawValue: 1)
        /// Write nothing when a registration names a device ID that another token's row carries (and
        /// its token's own row, if any, does not): such a batch needs `rotateDevices` first.
        static let refuseRotations = RegistrationOptions(rawValue: 2)
    }

    /// `registration` over chunks of `upsertChunkSize`, within the caller's transaction.
    static func register(
        appID: AppID,
        _ unique: [PushToStartRegistration],
        at: Date,
        options: RegistrationOptions,
        returningTokens: Bool,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> TokenRegistrationOutcome {
        var total = TokenRegistrationOutcome(written: 0, lateJoinersQueued: 0)
        var start = 0
        while start < unique.count {
            let chunk = unique[start..<min(start + upsertChunkSize, unique.count)]
            start += chunk.count
            let statement = registration(
                appID: appID,
                chunk,
                at: at,
                options: options,
                returningTokens: returningTokens
            )
            let rows = try await connection.rows(PreparedRegistration(statement), logger: logger)
            guard let outcome = try registrationOutcome(rows, returningTokens: returningTokens) else {
                throw StoreError.corruptRow(entity: "registration", detail: "refused a rotation it was not asked to")
            }
            total.written += outcome.written
            total.lateJoinersQueued += outcome.lateJoinersQueued
            total.tokens += outcome.tokens
        }
        return total
    }

    /// One statement: the upsert of `chunk` (deduplicated) and, with `.queueLateJoiners`, the
    /// pending starts of the rows it wrote (one NOTIFY per transaction wakes every replica's pump).
    /// Every row is reached by the unique key (the upsert's arbiter), by the device index one
    /// registration at a time, or by what the upsert returned, and the offers only behind an
    /// uncorrelated gate (the app has an enabled one), so the plan does not depend on statistics: a
    /// bulk import not yet analyzed cannot turn it into a scan (`RegistrationPlanTests`). The
    /// `OFFSET 0` keeps each rotation and ledger probe a per-registration subplan: as a semi-join,
    /// a planner without statistics hashed every device row of the app for a batch of 1,000. It answers one
    /// row of counts (`written_count`, `queued_count`, `rotating_count`), or with `returningTokens`
    /// one per written row, each with the counts.
    ///
    /// `u` is limited to the chunk's own count, which changes nothing it reads but what PostgreSQL
    /// expects of it before the call: a generic plan reads `UNNEST` of a parameter as 10 rows and a
    /// `LIMIT` of a parameter as a tenth of them, so the generic plan expects one registration, and
    /// is not dearer than one planned for any call's values. PostgreSQL then keeps it after the
    /// first five calls on a connection (`PreparedQueryShape`) instead of planning the statement
    /// again at each registration: without the limit, a connection whose first calls were single
    /// registrations or the small batches `RegistrationCoalescer` makes under load planned every
    /// such call (1.3-1.5 ms of planning against 0.2-0.3 ms of running, 0.4 of PostgreSQL's 0.7
    /// cores in a match-day soak), and one whose first calls were imports did not
    /// (`RegistrationPlanTests`).
    static func registration(
        appID: AppID,
        _ chunk: ArraySlice<PushToStartRegistration>,
        at: Date,
        options: RegistrationOptions,
        returningTokens: Bool
    ) -> PostgresQuery {
        // Arrays cannot hold NULL through PostgresNIO's encoders: '' stands for "none" and NULLIF
        // turns it back.
        let environments = chunk.map(\.environment.rawValue)
        let types = chunk.map(\.attributesType)
        let tokens = chunk.map(\.token)
        let devices = chunk.map { $0.deviceID ?? "" }
        let users = chunk.map { $0.userID ?? "" }
        let tags = chunk.map { ColumnCoding.tags($0.tags) }
        let versions = chunk.map { $0.iosVersion ?? "" }
        let frequent = chunk.map(\.frequentPushesEnabled)
        let deviceTokens = chunk.map { $0.deviceToken ?? "" }
        return """
            WITH u AS (
                SELECT * FROM UNNEST(\(environments)::text[], \(types)::text[], \(tokens)::text[], \(devices)::text[],
                                     \(users)::text[], \(tags)::text[], \(versions)::text[], \(frequent)::bool[],
                                     \(deviceTokens)::text[])
                     AS u(environment, attributes_type, token, device_id, user_id, tags, ios_version, frequent, \
            device_token)
                LIMIT \(chunk.count)
            ), rotating AS (
                SELECT 1 FROM u
                WHERE \(options.contains(.refuseRotations)) AND u.device_id <> ''
                  AND EXISTS (SELECT 1 FROM push_to_start_tokens d
                              WHERE d.app_id = \(appID.uuid) AND d.environment = u.environment
                                AND d.attributes_type = u.attributes_type AND d.device_id = u.device_id
                                AND d.token <> u.token OFFSET 0)
                  AND NOT EXISTS (SELECT 1 FROM push_to_start_tokens n
                                  WHERE n.app_id = \(appID.uuid) AND n.environment = u.environment
                                    AND n.attributes_type = u.attributes_type AND n.token = u.token
                                    AND n.device_id = u.device_id OFFSET 0)
            ), written AS (
                INSERT INTO push_to_start_tokens AS t
                    (app_id, environment, attributes_type, token, device_id, user_id, tags, ios_version,
                     frequent_pushes_enabled, first_registered_at, last_registered_at, device_token)
                SELECT \(appID.uuid), u.environment, u.attributes_type, u.token, NULLIF(u.device_id, ''),
                       NULLIF(u.user_id, ''), u.tags::jsonb, NULLIF(u.ios_version, ''), u.frequent, \(at), \(at),
                       NULLIF(u.device_token, '')
                FROM u
                WHERE NOT EXISTS (SELECT 1 FROM rotating)
                ON CONFLICT (app_id, environment, attributes_type, token) DO UPDATE SET
                    device_id = EXCLUDED.device_id,
                    user_id = EXCLUDED.user_id,
                    tags = EXCLUDED.tags,
                    ios_version = EXCLUDED.ios_version,
                    frequent_pushes_enabled = EXCLUDED.frequent_pushes_enabled,
                    last_registered_at = GREATEST(t.last_registered_at, EXCLUDED.last_registered_at),
                    device_token = COALESCE(EXCLUDED.device_token, t.device_token),
                    invalidated_at = NULL,
                    invalidation_reason = NULL
                RETURNING t.*
            ), queued AS (
                INSERT INTO pending_starts (app_id, event_id, environment, token_id, reason, pending_since)
                SELECT t.app_id, o.event_id, t.environment, t.id, \(PendingStartReason.lateJoin.rawValue), \(at)
                FROM written t
                JOIN late_join_offers o
                  ON o.app_id = t.app_id AND o.environment = t.environment AND o.attributes_type = t.attributes_type
                 AND o.enabled
                JOIN events e ON e.id = o.event_id
                WHERE \(options.contains(.queueLateJoiners))
                  AND EXISTS (SELECT 1 FROM late_join_offers g WHERE g.app_id = \(appID.uuid) AND g.enabled)
                  AND \(unescaped: RowMapping.eventTakesLateJoiners(environment: "o.environment"))
                  AND (o.everyone OR t.tags ?| ARRAY(SELECT jsonb_array_elements_text(o.tags)))
                  AND NOT EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = o.event_id AND s.token_id = t.id
                                  OFFSET 0)
                ON CONFLICT (event_id, token_id) DO NOTHING
                RETURNING id, pg_notify(\(jobsChannel), \(pendingStartsNotification))
            ), outcome AS (
                SELECT (SELECT count(*) FROM written) AS written_count, (SELECT count(*) FROM queued) AS queued_count,
                       (SELECT count(*) FROM rotating) AS rotating_count
            )
            SELECT c.*, \(unescaped: RowMapping.tokenColumns(.postgres)) FROM outcome c LEFT JOIN written ON \(returningTokens)
            """
    }

    /// The outcome a `registration` statement answered; nil when it refused a rotation (and wrote
    /// nothing).
    static func registrationOutcome(_ rows: [PostgresRow], returningTokens: Bool) throws -> TokenRegistrationOutcome? {
        guard let first = rows.first.map({ PostgresColumns($0, entity: "registration") }) else {
            throw StoreError.corruptRow(entity: "registration", detail: "no outcome row")
        }
        if try first.int64("rotating_count") > 0 { return nil }
        var outcome = TokenRegistrationOutcome(
            written: try first.int("written_count"),
            lateJoinersQueued: try first.int("queued_count")
        )
        if returningTokens && outcome.written > 0 {
            outcome.tokens = try rows.mapped(RowMapping.token)
        }
        return outcome
    }

    /// A registration for an app that is gone fails the tokens' foreign key: that is the app's
    /// `notFound`, as the transactional path's `FOR SHARE` check answers.
    static func mappingUnknownApp<Result>(
        _ appID: AppID,
        _ body: () async throws -> Result
    ) async throws -> Result {
        do {
            return try await body()
        } catch let error as PSQLError
            where error.serverInfo?[.constraintName] == "push_to_start_tokens_app_id_fkey"
        {
            throw StoreError.notFound(entity: "app", id: appID.description)
        }
    }
}
