import Foundation
import MarqueeCore
import SQLiteNIO

/// Column lists and row mappings, one per table, mirroring `PostgresRows`.
enum SQLiteRows {
    static let appColumns = "id, name, bundle_id, team_id, environments, created_at, (SELECT k.id FROM signing_keys k WHERE k.app_id = apps.id ORDER BY k.created_at DESC, k.id LIMIT 1) AS signing_key_id"

    static func app(_ row: SQLiteRow) throws -> App {
        let columns = SQLiteColumns(row, entity: "app")
        return App(
            id: try columns.id("id"),
            name: try columns.string("name"),
            bundleID: try columns.string("bundle_id"),
            teamID: try columns.string("team_id"),
            environments: try ColumnCoding.environments(try columns.string("environments"), entity: "app"),
            signingKeyID: try columns.optionalUUID("signing_key_id").map(SigningKeyID.init),
            createdAt: try columns.date("created_at")
        )
    }

    static let signingKeyColumns = "id, app_id, key_id, team_id, environments, created_at"

    static func signingKey(_ row: SQLiteRow) throws -> SigningKey {
        let columns = SQLiteColumns(row, entity: "signing key")
        return SigningKey(
            id: try columns.id("id"),
            appID: try columns.id("app_id"),
            keyID: try columns.string("key_id"),
            teamID: try columns.string("team_id"),
            environments: try ColumnCoding.environments(try columns.string("environments"), entity: "signing key"),
            createdAt: try columns.date("created_at")
        )
    }

    static let apiKeyColumns = "id, app_id, role, prefix, secret_hash, label, created_at, revoked_at"

    static func apiKey(_ row: SQLiteRow) throws -> APIKey {
        let columns = SQLiteColumns(row, entity: "api key")
        return APIKey(
            id: try columns.id("id"),
            appID: try columns.id("app_id"),
            role: try columns.parse("role", as: APIKeyRole.self),
            prefix: try columns.string("prefix"),
            secretHash: try columns.bytes("secret_hash"),
            label: try columns.string("label"),
            createdAt: try columns.date("created_at"),
            revokedAt: try columns.optionalDate("revoked_at")
        )
    }

    static let eventColumns =
        "id, app_id, external_key, title, attributes_type, environments, storage_policy, planned_start, planned_end, state, created_at, updated_at"

    static func event(_ row: SQLiteRow) throws -> Event {
        let columns = SQLiteColumns(row, entity: "event")
        return Event(
            id: try columns.id("id"),
            appID: try columns.id("app_id"),
            externalKey: try columns.string("external_key"),
            title: try columns.string("title"),
            attributesType: try columns.string("attributes_type"),
            environments: try ColumnCoding.environments(try columns.string("environments"), entity: "event"),
            storagePolicy: try columns.parse("storage_policy", as: MessageStoragePolicy.self),
            plannedStart: try columns.date("planned_start"),
            plannedEnd: try columns.date("planned_end"),
            state: try columns.parse("state", as: EventState.self),
            createdAt: try columns.date("created_at"),
            updatedAt: try columns.date("updated_at")
        )
    }

    static let channelColumns =
        "id, app_id, event_id, environment, apns_channel_id, storage_policy, state, create_request_id, last_broadcast_timestamp, created_at, updated_at"

    static func channel(_ row: SQLiteRow) throws -> MarqueeCore.Channel {
        let columns = SQLiteColumns(row, entity: "channel")
        return MarqueeCore.Channel(
            id: try columns.id("id"),
            appID: try columns.id("app_id"),
            eventID: try columns.optionalUUID("event_id").map(EventID.init),
            environment: try columns.parse("environment", as: APNSEnvironment.self),
            apnsChannelID: try columns.optionalString("apns_channel_id"),
            storagePolicy: try columns.parse("storage_policy", as: MessageStoragePolicy.self),
            state: try columns.parse("state", as: ChannelState.self),
            createRequestID: try columns.uuid("create_request_id"),
            lastBroadcastTimestamp: try columns.optionalInt64("last_broadcast_timestamp"),
            createdAt: try columns.date("created_at"),
            updatedAt: try columns.date("updated_at")
        )
    }

    static let tokenColumns =
        "id, app_id, environment, attributes_type, token, device_id, user_id, tags, ios_version, frequent_pushes_enabled, first_registered_at, last_registered_at, invalidated_at, invalidation_reason"

    static func token(_ row: SQLiteRow) throws -> PushToStartToken {
        let columns = SQLiteColumns(row, entity: "token")
        return PushToStartToken(
            rowID: try columns.int64("id"),
            appID: try columns.id("app_id"),
            environment: try columns.parse("environment", as: APNSEnvironment.self),
            attributesType: try columns.string("attributes_type"),
            token: try columns.string("token"),
            deviceID: try columns.optionalString("device_id"),
            userID: try columns.optionalString("user_id"),
            tags: try ColumnCoding.tags(try columns.string("tags"), entity: "token"),
            iosVersion: try columns.optionalString("ios_version"),
            frequentPushesEnabled: try columns.bool("frequent_pushes_enabled"),
            firstRegisteredAt: try columns.date("first_registered_at"),
            lastRegisteredAt: try columns.date("last_registered_at"),
            invalidatedAt: try columns.optionalDate("invalidated_at"),
            invalidationReason: try columns.optionalString("invalidation_reason").map(APNSErrorReason.init(reasonString:))
        )
    }

    static let activityColumns =
        "id, app_id, event_id, environment, activity_id, channel_id, push_to_start_token_id, state, last_timestamp_sent, created_at, updated_at"

    static func activity(_ row: SQLiteRow, updateTokens: [UpdateTokenRecord]) throws -> Activity {
        let columns = SQLiteColumns(row, entity: "activity")
        return Activity(
            id: try columns.id("id"),
            appID: try columns.id("app_id"),
            eventID: try columns.id("event_id"),
            environment: try columns.parse("environment", as: APNSEnvironment.self),
            activityID: try columns.optionalString("activity_id"),
            channelID: try columns.optionalUUID("channel_id").map(ChannelID.init),
            pushToStartTokenRowID: try columns.optionalInt64("push_to_start_token_id"),
            updateTokens: updateTokens,
            state: try columns.parse("state", as: ActivityState.self),
            lastTimestampSent: try columns.optionalInt64("last_timestamp_sent"),
            createdAt: try columns.date("created_at"),
            updatedAt: try columns.date("updated_at")
        )
    }

    static let jobColumns =
        "id, app_id, kind, arguments, due_at, state, lease_owner, lease_expires_at, attempts, progress_attempted, progress_succeeded, progress_failed, checkpoint, last_error, created_at, updated_at"

    static func job(_ row: SQLiteRow) throws -> Job {
        let columns = SQLiteColumns(row, entity: "job")
        let owner = try columns.optionalString("lease_owner")
        let expiry = try columns.optionalDate("lease_expires_at")
        return Job(
            id: try columns.id("id"),
            appID: try columns.id("app_id"),
            kind: JobKind(rawValue: try columns.string("kind")),
            arguments: try ColumnCoding.jsonValue(try columns.string("arguments"), entity: "job"),
            dueAt: try columns.date("due_at"),
            state: try columns.parse("state", as: JobState.self),
            lease: owner.flatMap { owner in expiry.map { JobLease(owner: owner, expiresAt: $0) } },
            attempts: try columns.int("attempts"),
            progress: JobProgress(
                attempted: try columns.int64("progress_attempted"),
                succeeded: try columns.int64("progress_succeeded"),
                failed: try columns.int64("progress_failed")
            ),
            checkpoint: try columns.optionalString("checkpoint"),
            lastError: try columns.optionalString("last_error"),
            createdAt: try columns.date("created_at"),
            updatedAt: try columns.date("updated_at")
        )
    }

    static let deliveryColumns = "job_id, token_id, attempt, outcome, status, apns_id, reason, sent_at, completed_at"

    static func delivery(_ row: SQLiteRow) throws -> Delivery {
        let columns = SQLiteColumns(row, entity: "delivery")
        return Delivery(
            jobID: try columns.id("job_id"),
            tokenRowID: try columns.int64("token_id"),
            attempt: try columns.int("attempt"),
            outcome: try columns.parse("outcome", as: DeliveryOutcome.self),
            status: try columns.optionalInt("status"),
            apnsID: try columns.optionalUUID("apns_id"),
            reason: try columns.optionalString("reason").map(APNSErrorReason.init(reasonString:)),
            sentAt: try columns.date("sent_at"),
            completedAt: try columns.date("completed_at")
        )
    }

    static let broadcastLogColumns =
        "app_id, channel_id, apns_request_id, apns_unique_id, priority, aps_timestamp, status, reason, latency_us, sent_at"

    static func broadcastLogEntry(_ row: SQLiteRow) throws -> BroadcastLogEntry {
        let columns = SQLiteColumns(row, entity: "broadcast log")
        return BroadcastLogEntry(
            appID: try columns.id("app_id"),
            channelID: try columns.id("channel_id"),
            apnsRequestID: try columns.uuid("apns_request_id"),
            apnsUniqueID: try columns.optionalString("apns_unique_id"),
            priority: try columns.parse("priority", as: APNSPriority.self),
            timestamp: try columns.int64("aps_timestamp"),
            status: try columns.int("status"),
            reason: try columns.optionalString("reason").map(APNSErrorReason.init(reasonString:)),
            latency: .microseconds(try columns.int64("latency_us")),
            sentAt: try columns.date("sent_at")
        )
    }
}
