import Foundation
import MarqueeCore

/// Column lists and row mappings, one per table, shared by both stores. Columns that PostgreSQL
/// keeps in a native type without a Swift counterpart (`jsonb`, `json`) are selected as text.
enum RowMapping {
    enum Dialect {
        case postgres
        case sqlite
    }

    static let appColumns = """
        id, name, bundle_id, team_id, environments, created_at, \
        (SELECT k.id FROM signing_keys k WHERE k.app_id = apps.id ORDER BY k.created_at DESC, k.id LIMIT 1) AS \
        signing_key_id
        """

    static func app(_ row: some ColumnReader) throws -> App {
        App(
            id: try row.id("id"),
            name: try row.string("name"),
            bundleID: try row.string("bundle_id"),
            teamID: try row.string("team_id"),
            environments: try row.environments("environments"),
            signingKeyID: try row.optionalID("signing_key_id"),
            createdAt: try row.date("created_at")
        )
    }

    static let signingKeyColumns = "id, app_id, key_id, team_id, environments, created_at"

    static func signingKey(_ row: some ColumnReader) throws -> SigningKey {
        SigningKey(
            id: try row.id("id"),
            appID: try row.id("app_id"),
            keyID: try row.string("key_id"),
            teamID: try row.string("team_id"),
            environments: try row.environments("environments"),
            createdAt: try row.date("created_at")
        )
    }

    static let apiKeyColumns = "id, app_id, role, prefix, secret_hash, label, created_at, revoked_at"

    static func apiKey(_ row: some ColumnReader) throws -> APIKey {
        APIKey(
            id: try row.id("id"),
            appID: try row.optionalID("app_id"),
            role: try row.parse("role", as: APIKeyRole.self),
            prefix: try row.string("prefix"),
            secretHash: try row.bytes("secret_hash"),
            label: try row.string("label"),
            createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at")
        )
    }

    // `timeline` is json on PostgreSQL; PostgresNIO reads a json column as its text.
    static let eventColumns = """
        id, app_id, external_key, title, attributes_type, environments, storage_policy, priority_policy, \
        planned_start, \
        planned_end, timeline, late_joiners, state, created_at, updated_at
        """

    /// The activities that take device pushes, `a` with its current update token `u`: the source
    /// of the activity-update audience (both stores) and of the check whether an event has one.
    static let updateAudienceSource =
        "activities a JOIN activity_update_tokens u ON u.activity_id = a.id AND u.retired_at IS NULL"
    /// What keeps such an activity in the audience: not ended, on no channel.
    static let updateAudienceCondition = "a.state <> 'ended' AND a.channel_id IS NULL"

    /// Ends the activity of row `seq` on a 410 for its update token, in the dialect's placeholders
    /// (1: the commit's time, 2: app, 3: row, 4: the token APNs refused or NULL, 5: APNs' timestamp as a
    /// date): `TokenInvalidation.endsActivity(currentUpdateToken:receivedAt:)` applied to the row,
    /// so the token must still be the activity's current one and received no later than APNs'
    /// verdict. The row's `seq` is the dialect's (`seqColumn`: `seq`, or SQLite's `rowid`).
    static func endActivityOnInvalidatedUpdateToken(seqColumn: String, _ placeholder: (Int) -> String) -> String {
        """
        UPDATE activities AS a SET state = 'ended', updated_at = \(placeholder(1))
        WHERE a.app_id = \(placeholder(2)) AND a.\(seqColumn) = \(placeholder(3)) AND a.state <> 'ended'
          AND EXISTS (SELECT 1 FROM activity_update_tokens u
                      WHERE u.activity_id = a.id AND u.retired_at IS NULL
                        AND (CAST(\(placeholder(4)) AS text) IS NULL OR u.token = \(placeholder(4)))
                        AND u.received_at <= \(placeholder(5)))
        """
    }

    /// Whether the `events` row has activities on update tokens in `environment` (the audience of
    /// `updateAudience`), as a column of a query on `events`; on PostgreSQL one probe of the partial
    /// index activities_update_audience.
    static func hasUpdateAudience(_ environment: APNSEnvironment) -> String {
        """
        EXISTS (SELECT 1 FROM \(updateAudienceSource)
                WHERE a.app_id = events.app_id AND a.event_id = events.id AND a.environment = '\(environment.rawValue)'
                  AND \(updateAudienceCondition))
        """
    }

    /// The columns of a query on `events` that `broadcastTarget` reads.
    static let broadcastTargetColumns = """
        \(eventColumns),
        \(hasUpdateAudience(.sandbox)) AS sandbox_update_audience,
        \(hasUpdateAudience(.production)) AS production_update_audience
        """

    /// An event row with the `sandbox_update_audience` and `production_update_audience` flags.
    static func broadcastTarget(_ row: some ColumnReader) throws -> BroadcastTarget {
        var environments: Set<APNSEnvironment> = []
        if try row.bool("sandbox_update_audience") { environments.insert(.sandbox) }
        if try row.bool("production_update_audience") { environments.insert(.production) }
        return BroadcastTarget(event: try event(row), updateTokenEnvironments: environments)
    }

    /// The prefix of a channel's columns in a row that also holds its event (`beginBroadcast`).
    static let takenChannelPrefix = "channel_"

    /// `channelColumns` of the table `alias`, each named with `takenChannelPrefix`.
    static func takenChannelColumns(of alias: String) -> String {
        channelColumnNames.map { "\(alias).\($0) AS \(takenChannelPrefix)\($0)" }.joined(separator: ", ")
    }

    /// A broadcast's target from `beginBroadcast`'s rows: the event (with its update-audience
    /// flags) on each, and on each a channel taken (`takenChannelColumns`, with its
    /// `immediate_sent`) or none; `nil` for no rows (no such event).
    static func beganBroadcast<Row: ColumnReader>(_ rows: [Row]) throws -> BroadcastTarget? {
        guard let first = rows.first else { return nil }
        var target = try broadcastTarget(first)
        for row in rows {
            let channel = PrefixedColumns(base: row, prefix: takenChannelPrefix)
            guard try channel.optionalUUID("id") != nil else { continue }
            let taken = BroadcastTake(channel: try self.channel(channel), immediateSent: try row.int("immediate_sent"))
            target.taken[taken.channel.environment] = taken
        }
        return target
    }

    static func event(_ row: some ColumnReader) throws -> Event {
        Event(
            id: try row.id("id"),
            appID: try row.id("app_id"),
            externalKey: try row.string("external_key"),
            title: try row.string("title"),
            attributesType: try row.string("attributes_type"),
            environments: try row.environments("environments"),
            storagePolicy: try row.parse("storage_policy", as: MessageStoragePolicy.self),
            priorityPolicy: try row.optionalString("priority_policy").map { text in
                guard let policy = PriorityPolicy(rawValue: text) else {
                    throw StoreError.corruptRow(entity: "event", detail: "priority_policy \(text)")
                }
                return policy
            },
            plannedStart: try row.date("planned_start"),
            plannedEnd: try row.date("planned_end"),
            timeline: try row.optionalString("timeline").map { text in
                guard let settings = EventTimelineSettings(json: try ColumnCoding.jsonValue(text, entity: "event"))
                else {
                    throw StoreError.corruptRow(entity: "event", detail: "timeline \(text)")
                }
                return settings
            },
            lateJoiners: try row.bool("late_joiners"),
            state: try row.parse("state", as: EventState.self),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at")
        )
    }

    static let channelColumns = """
        id, app_id, event_id, environment, apns_channel_id, storage_policy, state, create_request_id, \
        last_broadcast_timestamp, created_at, updated_at
        """

    /// `channelColumns` of the table `alias` under their own names, for a read that joins another table.
    static func channelColumns(of alias: String) -> String {
        channelColumnNames.map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    private static let channelColumnNames = channelColumns.split(separator: ",").map {
        $0.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A channel list row: `channelColumns(of:)` and the event's `event_key`.
    static func listedChannel(_ row: some ColumnReader) throws -> ListedChannel {
        ListedChannel(channel: try channel(row), eventKey: try row.optionalString("event_key"))
    }

    static func channel(_ row: some ColumnReader) throws -> BroadcastChannel {
        BroadcastChannel(
            id: try row.id("id"),
            appID: try row.id("app_id"),
            eventID: try row.optionalID("event_id"),
            environment: try row.parse("environment", as: APNSEnvironment.self),
            apnsChannelID: try row.optionalString("apns_channel_id"),
            storagePolicy: try row.parse("storage_policy", as: MessageStoragePolicy.self),
            state: try row.parse("state", as: ChannelState.self),
            createRequestID: try row.uuid("create_request_id"),
            lastBroadcastTimestamp: try row.optionalInt64("last_broadcast_timestamp"),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at")
        )
    }

    static func tokenColumns(_ dialect: Dialect) -> String {
        """
        id, app_id, environment, attributes_type, token, device_id, user_id, \
        \(dialect == .postgres ? "tags::text AS tags" : "tags"), \
        ios_version, frequent_pushes_enabled, first_registered_at, last_registered_at, invalidated_at, \
        invalidation_reason, \
        device_token
        """
    }

    static func token(_ row: some ColumnReader) throws -> PushToStartToken {
        PushToStartToken(
            rowID: try row.int64("id"),
            appID: try row.id("app_id"),
            environment: try row.parse("environment", as: APNSEnvironment.self),
            attributesType: try row.string("attributes_type"),
            token: try row.string("token"),
            deviceID: try row.optionalString("device_id"),
            userID: try row.optionalString("user_id"),
            tags: try ColumnCoding.tags(try row.string("tags"), entity: row.entity),
            iosVersion: try row.optionalString("ios_version"),
            frequentPushesEnabled: try row.bool("frequent_pushes_enabled"),
            firstRegisteredAt: try row.date("first_registered_at"),
            lastRegisteredAt: try row.date("last_registered_at"),
            invalidatedAt: try row.optionalDate("invalidated_at"),
            invalidationReason: try row.reason("invalidation_reason"),
            deviceToken: try row.optionalString("device_token")
        )
    }

    static let activityColumns = """
        id, app_id, event_id, environment, activity_id, channel_id, push_to_start_token_id, state, \
        last_timestamp_sent, \
        frequent_pushes_enabled, created_at, updated_at
        """

    static func activity(_ row: some ColumnReader, updateTokens: [UpdateTokenRecord]) throws -> Activity {
        Activity(
            id: try row.id("id"),
            appID: try row.id("app_id"),
            eventID: try row.id("event_id"),
            environment: try row.parse("environment", as: APNSEnvironment.self),
            activityID: try row.optionalString("activity_id"),
            channelID: try row.optionalID("channel_id"),
            pushToStartTokenRowID: try row.optionalInt64("push_to_start_token_id"),
            updateTokens: updateTokens,
            state: try row.parse("state", as: ActivityState.self),
            lastTimestampSent: try row.optionalInt64("last_timestamp_sent"),
            frequentPushesEnabled: try row.bool("frequent_pushes_enabled"),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at")
        )
    }

    static let updateTokenColumns = "token, received_at, retired_at"

    static func updateToken(_ row: some ColumnReader) throws -> UpdateTokenRecord {
        UpdateTokenRecord(
            token: try row.string("token"),
            receivedAt: try row.date("received_at"),
            retiredAt: try row.optionalDate("retired_at")
        )
    }

    /// `prefix` qualifies each column (`j.`) for statements that join.
    static func jobColumns(_ dialect: Dialect, prefix: String = "") -> String {
        let arguments = dialect == .postgres ? "\(prefix)arguments::text AS arguments" : "\(prefix)arguments"
        return [
            "id", "app_id", "kind", "parent_id", arguments, "due_at", "state", "lease_owner", "lease_expires_at",
            "attempts",
            "progress_attempted", "progress_succeeded", "progress_failed", "progress_total", "progress_retired",
            "progress_downgraded", "progress_uncertain", "checkpoint", "last_error", "created_at", "updated_at",
        ].map { $0 == arguments ? $0 : prefix + $0 }.joined(separator: ", ")
            + ", \(prefix)reserved_through, \(prefix)serial_key"
    }

    static func job(_ row: some ColumnReader) throws -> Job {
        let owner = try row.optionalString("lease_owner")
        let expiry = try row.optionalDate("lease_expires_at")
        return Job(
            id: try row.id("id"),
            appID: try row.id("app_id"),
            kind: JobKind(rawValue: try row.string("kind")),
            parentID: try row.optionalID("parent_id"),
            arguments: try ColumnCoding.jsonValue(try row.string("arguments"), entity: row.entity),
            dueAt: try row.date("due_at"),
            state: try row.parse("state", as: JobState.self),
            lease: owner.flatMap { owner in expiry.map { JobLease(owner: owner, expiresAt: $0) } },
            attempts: try row.int("attempts"),
            progress: JobProgress(
                attempted: try row.int64("progress_attempted"),
                succeeded: try row.int64("progress_succeeded"),
                failed: try row.int64("progress_failed"),
                total: try row.optionalInt64("progress_total"),
                retired: try row.int64("progress_retired"),
                downgraded: try row.int64("progress_downgraded"),
                uncertain: try row.int64("progress_uncertain")
            ),
            checkpoint: try row.optionalString("checkpoint"),
            lastError: try row.optionalString("last_error"),
            reservedThrough: try row.optionalInt64("reserved_through"),
            serialKey: try row.optionalString("serial_key"),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at")
        )
    }

    static let deliveryColumns = "job_id, token_id, attempt, outcome, status, apns_id, reason, sent_at, completed_at"

    static func delivery(_ row: some ColumnReader) throws -> Delivery {
        Delivery(
            jobID: try row.id("job_id"),
            tokenRowID: try row.int64("token_id"),
            attempt: try row.int("attempt"),
            outcome: try row.parse("outcome", as: DeliveryOutcome.self),
            status: try row.optionalInt("status"),
            apnsID: try row.optionalUUID("apns_id"),
            reason: try row.reason("reason"),
            sentAt: try row.date("sent_at"),
            completedAt: try row.date("completed_at")
        )
    }

    /// What a fan-out reads of each audience row (`AudienceRecipient`), in this order.
    static let audienceRecipientColumns = "t.id, t.token, t.ios_version"

    static let startRecordColumns = "token_id, job_id, attempt, apns_id, sent_at, started_at"

    static func startRecord(_ row: some ColumnReader) throws -> StartRecord {
        StartRecord(
            tokenRowID: try row.int64("token_id"),
            jobID: try row.optionalID("job_id"),
            attempt: try row.optionalInt("attempt"),
            apnsID: try row.optionalUUID("apns_id"),
            sentAt: try row.optionalDate("sent_at"),
            startedAt: try row.date("started_at")
        )
    }

    static let broadcastLogColumns = """
        id, app_id, channel_id, apns_request_id, apns_unique_id, priority, aps_timestamp, status, reason, latency_us, \
        sent_at, \
        event, downgraded, content_state, alert, schedule_id
        """

    static func broadcastLogEntry(_ row: some ColumnReader) throws -> BroadcastLogEntry {
        BroadcastLogEntry(
            appID: try row.id("app_id"),
            channelID: try row.id("channel_id"),
            apnsRequestID: try row.uuid("apns_request_id"),
            apnsUniqueID: try row.optionalString("apns_unique_id"),
            priority: try row.parse("priority", as: APNSPriority.self),
            timestamp: try row.int64("aps_timestamp"),
            status: try row.int("status"),
            reason: try row.reason("reason"),
            latency: .microseconds(try row.int64("latency_us")),
            sentAt: try row.date("sent_at"),
            event: try row.parse("event", as: BroadcastEvent.self),
            downgraded: try row.bool("downgraded"),
            contentState: try row.optionalString("content_state").map { try logObject($0, column: "content_state") },
            alert: try row.optionalString("alert").map { try logObject($0, column: "alert") },
            scheduleID: try row.optionalID("schedule_id"),
            sequence: try row.int64("id")
        )
    }

    /// A JSON object column of the broadcast log (`content_state`, `alert`).
    static func logObject(_ text: String, column: String) throws -> JSONObject {
        guard case .object(let object) = try ColumnCoding.jsonValue(text, entity: "broadcast_log") else {
            throw StoreError.corruptRow(entity: "broadcast_log", detail: "\(column) is not an object")
        }
        return object
    }

    static let scheduleColumns = """
        id, app_id, event_id, kind, origin, due_at, state, request, outcome, last_error, attempts, performed_at, \
        created_at, \
        updated_at
        """

    /// The columns `scheduleAnswerEvent` reads: the schedule's event, and whether the schedule is
    /// one a channel-ID answer shows (`ChannelAnswerChanges.concerns`).
    static let scheduleAnswerColumns = "event_id, (kind = 'close' AND origin = 'timeline') AS shows_in_answer"

    /// The event whose channel-ID answer a change to this schedule row changed, if any.
    static func scheduleAnswerEvent(_ row: some ColumnReader) throws -> EventID? {
        guard try row.optionalBool("shows_in_answer") == true else { return nil }
        return try row.optionalID("event_id")
    }

    static func schedule(_ row: some ColumnReader) throws -> Schedule {
        Schedule(
            id: try row.id("id"),
            appID: try row.id("app_id"),
            eventID: try row.id("event_id"),
            kind: try row.parse("kind", as: ScheduleKind.self),
            origin: try row.parse("origin", as: ScheduleOrigin.self),
            dueAt: try row.date("due_at"),
            state: try row.parse("state", as: ScheduleState.self),
            request: try ColumnCoding.jsonValue(try row.string("request"), entity: row.entity),
            outcome: try row.optionalString("outcome").map { try ColumnCoding.jsonValue($0, entity: row.entity) },
            lastError: try row.optionalString("last_error"),
            attempts: try row.int("attempts"),
            performedAt: try row.optionalDate("performed_at"),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at")
        )
    }

    /// The idempotency row's stored response, `nil` while its request runs.
    static let idempotencyColumns = "request_hash, response_status, response_content_type, response_body, expires_at"

    static func storedResponse(_ row: some ColumnReader) throws -> StoredResponse? {
        try row.optionalInt("response_status").map { status in
            StoredResponse(
                status: status,
                contentType: try row.optionalString("response_content_type"),
                body: try row.optionalBytes("response_body") ?? []
            )
        }
    }
}
