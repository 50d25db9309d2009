import Foundation
import Logging
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    /// Within a registration's transaction: each registration that names a device whose row (same
    /// app, environment and attributes type) has another token moves that row to its token,
    /// merging the token's own row into it first when it has one that carries no such device ID
    /// (`TokenStore.upsertPushToStartTokens` says what moves). `registrations` are deduplicated:
    /// one per device. One statement finds the rotations; a batch of devices never seen before
    /// costs nothing else.
    static func rotateDevices(
        appID: AppID,
        _ registrations: [PushToStartRegistration],
        at: Date,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let named = registrations.filter { $0.deviceID != nil }
        guard !named.isEmpty else { return }
        // The device's row is its latest registered one (rows written before rotations were
        // recognised may share a device ID); a token row that already names the device is the
        // device's row, and nothing rotates.
        let found = try await connection.query(
            """
            SELECT d.id, n.id, u.token
            FROM UNNEST(\(named.map(\.environment.rawValue))::text[], \(named.map(\.attributesType))::text[],
                        \(named.map(\.token))::text[], \(named.map { $0.deviceID ?? "" })::text[])
                 WITH ORDINALITY AS u(environment, attributes_type, token, device_id, position)
            CROSS JOIN LATERAL (
                SELECT d.id FROM push_to_start_tokens d
                WHERE d.app_id = \(appID.uuid) AND d.environment = u.environment AND d.attributes_type = u.attributes_type
                  AND d.device_id = u.device_id AND d.token <> u.token
                ORDER BY d.last_registered_at DESC, d.id DESC LIMIT 1) d
            LEFT JOIN push_to_start_tokens n
                ON n.app_id = \(appID.uuid) AND n.environment = u.environment AND n.attributes_type = u.attributes_type
               AND n.token = u.token
            WHERE n.id IS NULL OR n.device_id IS DISTINCT FROM u.device_id
            ORDER BY u.position
            """,
            logger: logger
        ).collect()
        for row in found {
            let (deviceRow, tokenRow, token) = try row.decode((Int64, Int64?, String).self)
            try await rotate(deviceRow: deviceRow, to: token, merging: tokenRow, at: at, on: connection, logger: logger)
        }
    }

    /// Moves the device's row to `token`; `merging` is the token's own row, folded into it first.
    /// Both rows are locked before anything moves: a fan-out batch that is writing an outcome for
    /// either (it holds them FOR KEY SHARE) commits first, and its entries move with the rest.
    private static func rotate(
        deviceRow: Int64,
        to token: String,
        merging tokenRow: Int64?,
        at: Date,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let rows = [deviceRow] + (tokenRow.map { [$0] } ?? [])
        try await connection.query(
            "SELECT id FROM push_to_start_tokens WHERE id = ANY(\(rows)::bigint[]) ORDER BY id FOR UPDATE",
            logger: logger
        ).collect()
        if let tokenRow {
            // Where both rows have an entry for the same event (or job), the device's is kept: it
            // is what the device was sent; the token's goes with its row.
            let moves: [PostgresQuery] = [
                """
                UPDATE start_ledger SET token_id = \(deviceRow)
                WHERE token_id = \(tokenRow)
                  AND event_id NOT IN (SELECT event_id FROM start_ledger WHERE token_id = \(deviceRow))
                """,
                "DELETE FROM start_ledger WHERE token_id = \(tokenRow)",
                """
                UPDATE device_presence SET token_id = \(deviceRow)
                WHERE token_id = \(tokenRow)
                  AND event_id NOT IN (SELECT event_id FROM device_presence WHERE token_id = \(deviceRow))
                """,
                """
                UPDATE deliveries SET token_id = \(deviceRow)
                WHERE token_id = \(tokenRow)
                  AND job_id NOT IN (SELECT job_id FROM deliveries WHERE token_id = \(deviceRow))
                """,
                "UPDATE activities SET push_to_start_token_id = \(deviceRow) WHERE push_to_start_token_id = \(tokenRow)",
                "DELETE FROM push_to_start_tokens WHERE id = \(tokenRow)",
            ]
            for move in moves {
                try await connection.query(move, logger: logger).collect()
            }
        }
        // The registration's time becomes the row's: a 410 APNs dated before it (for either token)
        // does not retire the row, and one for the old token never does (it names that token).
        try await connection.query(
            """
            UPDATE push_to_start_tokens
            SET token = \(token), last_registered_at = GREATEST(last_registered_at, \(at)),
                invalidated_at = NULL, invalidation_reason = NULL
            WHERE id = \(deviceRow)
            """,
            logger: logger
        ).collect()
    }
}
