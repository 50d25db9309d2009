import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    /// Within a registration's transaction: each registration that names a device whose row (same
    /// app, environment and attributes type) has another token moves that row to its token,
    /// merging the token's own row into it first when it has one that carries no such device ID
    /// (`TokenStore.upsertPushToStartTokens` says what moves). The same rules as
    /// `PostgresStore.rotateDevices`; the write transaction holds the whole database, so nothing
    /// commits between the lookup and the moves.
    static func rotateDevices(
        appID: AppID,
        _ registrations: [PushToStartRegistration],
        at: Date,
        on connection: SQLiteConnection
    ) async throws {
        let named = registrations.filter { $0.deviceID != nil }
        guard !named.isEmpty else { return }
        let list = ColumnCoding.json(
            .array(
                named.map { registration in
                    .array([
                        .string(registration.environment.rawValue), .string(registration.attributesType),
                        .string(registration.token), .string(registration.deviceID ?? ""),
                    ])
                }
            )
        )
        // The device's row is its latest registered one; a token row that already names the device
        // is the device's row, and nothing rotates.
        let found = try await connection.query(
            """
            SELECT device_row, token_row, token FROM (
                SELECT u.key AS position, json_extract(u.value, '$[2]') AS token, n.id AS token_row, n.device_id AS \
            token_device,
                       json_extract(u.value, '$[3]') AS device_id,
                       (SELECT d.id FROM push_to_start_tokens d
                        WHERE d.app_id = ?1 AND d.environment = json_extract(u.value, '$[0]') AND d.attributes_type = \
            json_extract(u.value, '$[1]')
                          AND d.device_id = json_extract(u.value, '$[3]') AND d.token <> json_extract(u.value, '$[2]')
                        ORDER BY d.last_registered_at DESC, d.id DESC LIMIT 1) AS device_row
                FROM json_each(?2) u
                LEFT JOIN push_to_start_tokens n
                    ON n.app_id = ?1 AND n.environment = json_extract(u.value, '$[0]') AND n.attributes_type = \
            json_extract(u.value, '$[1]')
                   AND n.token = json_extract(u.value, '$[2]')
            )
            WHERE device_row IS NOT NULL AND (token_row IS NULL OR token_device IS NOT device_id)
            ORDER BY position
            """,
            [.id(appID), .text(list)]
        )
        for row in found {
            let columns = SQLiteColumns(row, entity: "push-to-start token")
            try await rotate(
                deviceRow: try columns.int64("device_row"),
                to: try columns.string("token"),
                merging: try columns.optionalInt64("token_row"),
                at: at,
                on: connection
            )
        }
    }

    /// Moves the device's row to `token`; `merging` is the token's own row, folded into it first.
    private static func rotate(
        deviceRow: Int64,
        to token: String,
        merging tokenRow: Int64?,
        at: Date,
        on connection: SQLiteConnection
    ) async throws {
        if let tokenRow {
            // Where both rows have an entry for the same event (or job), the device's is kept: it
            // is what the device was sent; the token's goes with its row (ON DELETE CASCADE).
            let moves = [
                """
                UPDATE start_ledger SET token_id = ?1
                WHERE token_id = ?2 AND event_id NOT IN (SELECT event_id FROM start_ledger WHERE token_id = ?1)
                """,
                """
                UPDATE device_presence SET token_id = ?1
                WHERE token_id = ?2 AND event_id NOT IN (SELECT event_id FROM device_presence WHERE token_id = ?1)
                """,
                """
                UPDATE deliveries SET token_id = ?1
                WHERE token_id = ?2 AND job_id NOT IN (SELECT job_id FROM deliveries WHERE token_id = ?1)
                """,
                "UPDATE activities SET push_to_start_token_id = ?1 WHERE push_to_start_token_id = ?2",
                // A start waiting for the token's row waits for the device's, unless the device has
                // one for the event or was started already; its claim is dropped (a pump holding it
                // for the merged row no longer does, and the next claim sends it to the device's).
                """
                UPDATE pending_starts SET token_id = ?1, claim_owner = NULL, claimed_until = NULL
                WHERE token_id = ?2
                  AND event_id NOT IN (SELECT event_id FROM pending_starts WHERE token_id = ?1)
                  AND event_id NOT IN (SELECT event_id FROM start_ledger WHERE token_id = ?1)
                """,
                // A batch that read the merged row before and commits after writes its ledger
                // entries through this (SQLiteStore+Deliveries); rows merged into the token's row
                // before now point at the device's.
                "UPDATE merged_token_rows SET into_id = ?1 WHERE into_id = ?2",
                "DELETE FROM push_to_start_tokens WHERE id = ?2 AND ?1 IS NOT NULL",
            ]
            for move in moves {
                _ = try await connection.query(move, [.int(deviceRow), .int(tokenRow)])
            }
            _ = try await connection.query(
                """
                INSERT INTO merged_token_rows (from_id, into_id, app_id, merged_at)
                SELECT ?2, id, app_id, ?3 FROM push_to_start_tokens WHERE id = ?1
                ON CONFLICT (from_id) DO UPDATE SET into_id = excluded.into_id
                """,
                [.int(deviceRow), .int(tokenRow), .date(at)]
            )
        }
        // The registration's time becomes the row's: a 410 APNs dated before it (for either token)
        // does not retire the row, and one for the old token never does (it names that token).
        _ = try await connection.query(
            """
            UPDATE push_to_start_tokens
            SET token = ?1, last_registered_at = MAX(last_registered_at, ?2), invalidated_at = NULL, \
            invalidation_reason = NULL
            WHERE id = ?3
            """,
            [.text(token), .date(at), .int(deviceRow)]
        )
    }
}
