import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresRandomAccessRow {
    func value<Value: PostgresDecodable>(_ column: String, as type: Value.Type = Value.self) throws -> Value {
        try self[column].decode(Value.self)
    }
}

/// Column lists and row mappings, one per table, so every query reads rows the same way.
enum PostgresRows {
    static let appColumns = "id, name, bundle_id, team_id, environments, created_at, (SELECT k.id FROM signing_keys k WHERE k.app_id = apps.id ORDER BY k.created_at DESC, k.id LIMIT 1) AS signing_key_id"

    static func app(_ row: PostgresRow) throws -> App {
        let row = row.makeRandomAccess()
        return App(
            id: AppID(try row.value("id")),
            name: try row.value("name"),
            bundleID: try row.value("bundle_id"),
            teamID: try row.value("team_id"),
            environments: try ColumnCoding.environments(try row.value("environments"), entity: "app"),
            signingKeyID: try row.value("signing_key_id", as: UUID?.self).map(SigningKeyID.init),
            createdAt: try row.value("created_at")
        )
    }

    static let signingKeyColumns = "id, app_id, key_id, team_id, environments, created_at"

    static func signingKey(_ row: PostgresRow) throws -> SigningKey {
        let row = row.makeRandomAccess()
        return SigningKey(
            id: SigningKeyID(try row.value("id")),
            appID: AppID(try row.value("app_id")),
            keyID: try row.value("key_id"),
            teamID: try row.value("team_id"),
            environments: try ColumnCoding.environments(try row.value("environments"), entity: "signing key"),
            createdAt: try row.value("created_at")
        )
    }

    static let apiKeyColumns = "id, app_id, role, prefix, secret_hash, label, created_at, revoked_at"

    static func apiKey(_ row: PostgresRow) throws -> APIKey {
        let row = row.makeRandomAccess()
        return APIKey(
            id: APIKeyID(try row.value("id")),
            appID: AppID(try row.value("app_id")),
            role: try ColumnCoding.parse(APIKeyRole.self, try row.value("role"), entity: "api key"),
            prefix: try row.value("prefix"),
            secretHash: Array(try row.value("secret_hash", as: Data.self)),
            label: try row.value("label"),
            createdAt: try row.value("created_at"),
            revokedAt: try row.value("revoked_at")
        )
    }

    static let eventColumns =
        "id, app_id, external_key, title, attributes_type, environments, storage_policy, planned_start, planned_end, state, created_at, updated_at"

    static func event(_ row: PostgresRow) throws -> Event {
        let row = row.makeRandomAccess()
        return Event(
            id: EventID(try row.value("id")),
            appID: AppID(try row.value("app_id")),
            externalKey: try row.value("external_key"),
            title: try row.value("title"),
            attributesType: try row.value("attributes_type"),
            environments: try ColumnCoding.environments(try row.value("environments"), entity: "event"),
            storagePolicy: try ColumnCoding.parse(MessageStoragePolicy.self, try row.value("storage_policy"), entity: "event"),
            plannedStart: try row.value("planned_start"),
            plannedEnd: try row.value("planned_end"),
            state: try ColumnCoding.parse(EventState.self, try row.value("state"), entity: "event"),
            createdAt: try row.value("created_at"),
            updatedAt: try row.value("updated_at")
        )
    }

    static let channelColumns =
        "id, app_id, event_id, environment, apns_channel_id, storage_policy, state, create_request_id, last_broadcast_timestamp, created_at, updated_at"

    static func channel(_ row: PostgresRow) throws -> MarqueeCore.Channel {
        let row = row.makeRandomAccess()
        return MarqueeCore.Channel(
            id: ChannelID(try row.value("id")),
            appID: AppID(try row.value("app_id")),
            eventID: try row.value("event_id", as: UUID?.self).map(EventID.init),
            environment: try ColumnCoding.parse(APNSEnvironment.self, try row.value("environment"), entity: "channel"),
            apnsChannelID: try row.value("apns_channel_id"),
            storagePolicy: try ColumnCoding.parse(MessageStoragePolicy.self, try row.value("storage_policy"), entity: "channel"),
            state: try ColumnCoding.parse(ChannelState.self, try row.value("state"), entity: "channel"),
            createRequestID: try row.value("create_request_id"),
            lastBroadcastTimestamp: try row.value("last_broadcast_timestamp"),
            createdAt: try row.value("created_at"),
            updatedAt: try row.value("updated_at")
        )
    }

    static let tokenColumns =
        "id, app_id, environment, attributes_type, token, device_id, user_id, tags::text AS tags, ios_version, frequent_pushes_enabled, first_registered_at, last_registered_at, invalidated_at, invalidation_reason"

    static func token(_ row: PostgresRow) throws -> PushToStartToken {
        let row = row.makeRandomAccess()
        return PushToStartToken(
            rowID: try row.value("id"),
            appID: AppID(try row.value("app_id")),
            environment: try ColumnCoding.parse(APNSEnvironment.self, try row.value("environment"), entity: "token"),
            attributesType: try row.value("attributes_type"),
            token: try row.value("token"),
            deviceID: try row.value("device_id"),
            userID: try row.value("user_id"),
            tags: try ColumnCoding.tags(try row.value("tags"), entity: "token"),
            iosVersion: try row.value("ios_version"),
            frequentPushesEnabled: try row.value("frequent_pushes_enabled"),
            firstRegisteredAt: try row.value("first_registered_at"),
            lastRegisteredAt: try row.value("last_registered_at"),
            invalidatedAt: try row.value("invalidated_at"),
            invalidationReason: try row.value("invalidation_reason", as: String?.self).map(APNSErrorReason.init(reasonString:))
        )
    }

    static let activityColumns =
        "id, app_id, event_id, environment, activity_id, channel_id, push_to_start_token_id, state, last_timestamp_sent, created_at, updated_at"

    static func activity(_ row: PostgresRow, updateTokens: [UpdateTokenRecord]) throws -> Activity {
        let row = row.makeRandomAccess()
        return Activity(
            id: ActivityRecordID(try row.value("id")),
            appID: AppID(try row.value("app_id")),
            eventID: EventID(try row.value("event_id")),
            environment: try ColumnCoding.parse(APNSEnvironment.self, try row.value("environment"), entity: "activity"),
            activityID: try row.value("activity_id"),
            channelID: try row.value("channel_id", as: UUID?.self).map(ChannelID.init),
            pushToStartTokenRowID: try row.value("push_to_start_token_id"),
            updateTokens: updateTokens,
            state: try ColumnCoding.parse(ActivityState.self, try row.value("state"), entity: "activity"),
            lastTimestampSent: try row.value("last_timestamp_sent"),
            createdAt: try row.value("created_at"),
            updatedAt: try row.value("updated_at")
        )
    }

    static let jobColumns =
        "id, app_id, kind, arguments::text AS arguments, due_at, state, lease_owner, lease_expires_at, attempts, progress_attempted, progress_succeeded, progress_failed, checkpoint, last_error, created_at, updated_at"

    static func job(_ row: PostgresRow) throws -> Job {
        let row = row.makeRandomAccess()
        let owner: String? = try row.value("lease_owner")
        let expiry: Date? = try row.value("lease_expires_at")
        return Job(
            id: JobID(try row.value("id")),
            appID: AppID(try row.value("app_id")),
            kind: JobKind(rawValue: try row.value("kind")),
            arguments: try ColumnCoding.jsonValue(try row.value("arguments"), entity: "job"),
            dueAt: try row.value("due_at"),
            state: try ColumnCoding.parse(JobState.self, try row.value("state"), entity: "job"),
            lease: owner.flatMap { owner in expiry.map { JobLease(owner: owner, expiresAt: $0) } },
            attempts: try row.value("attempts"),
            progress: JobProgress(
                attempted: try row.value("progress_attempted"),
                succeeded: try row.value("progress_succeeded"),
                failed: try row.value("progress_failed")
            ),
            checkpoint: try row.value("checkpoint"),
            lastError: try row.value("last_error"),
            createdAt: try row.value("created_at"),
            updatedAt: try row.value("updated_at")
        )
    }

    static let deliveryColumns = "job_id, token_id, attempt, outcome, status, apns_id, reason, sent_at, completed_at"

    static func delivery(_ row: PostgresRow) throws -> Delivery {
        let row = row.makeRandomAccess()
        return Delivery(
            jobID: JobID(try row.value("job_id")),
            tokenRowID: try row.value("token_id"),
            attempt: try row.value("attempt"),
            outcome: try ColumnCoding.parse(DeliveryOutcome.self, try row.value("outcome"), entity: "delivery"),
            status: try row.value("status"),
            apnsID: try row.value("apns_id"),
            reason: try row.value("reason", as: String?.self).map(APNSErrorReason.init(reasonString:)),
            sentAt: try row.value("sent_at"),
            completedAt: try row.value("completed_at")
        )
    }

    static let broadcastLogColumns =
        "app_id, channel_id, apns_request_id, apns_unique_id, priority, aps_timestamp, status, reason, latency_us, sent_at"

    static func broadcastLogEntry(_ row: PostgresRow) throws -> BroadcastLogEntry {
        let row = row.makeRandomAccess()
        return BroadcastLogEntry(
            appID: AppID(try row.value("app_id")),
            channelID: ChannelID(try row.value("channel_id")),
            apnsRequestID: try row.value("apns_request_id"),
            apnsUniqueID: try row.value("apns_unique_id"),
            priority: try ColumnCoding.parse(APNSPriority.self, try row.value("priority"), entity: "broadcast log"),
            timestamp: try row.value("aps_timestamp"),
            status: try row.value("status"),
            reason: try row.value("reason", as: String?.self).map(APNSErrorReason.init(reasonString:)),
            latency: .microseconds(try row.value("latency_us", as: Int64.self)),
            sentAt: try row.value("sent_at")
        )
    }
}
