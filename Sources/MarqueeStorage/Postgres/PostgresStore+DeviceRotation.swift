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
        let found = try await connection.rows(
            PreparedQuery<RotationsShape>(rotations(appID: appID, named)),
            logger: logger
        )
        let rotations = try found.map { try $0.decode((Int64, Int64?, String).self) }
        if rotations.contains(where: { $0.1 != nil }) {
            // Before any token row is locked: a batch holds the shared lock while it holds token
            // rows (its deliveries' foreign keys), so taking it later could deadlock.
            _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Self.mergeLockKey(appID)))", logger: logger)
                .collect()
        }
        for (deviceRow, tokenRow, token) in rotations {
            try await rotate(
                appID: appID,
                deviceRow: deviceRow,
                to: token,
                merging: tokenRow,
                at: at,
                on: connection,
                logger: logger
            )
        }
    }

    /// The rotations among `named` (registrations with a device ID): per registration in order, the
    /// device's row, the token's own row if it has one to merge, and the token. A shape's statement
    /// (`RotationsShape`): `u` is limited to its own count so that the generic plan expects one
    /// registration (`PreparedQueryShape`), and a rotation's transaction does not plan it again.
    static func rotations(appID: AppID, _ named: [PushToStartRegistration]) -> PostgresQuery {
        """
        SELECT d.id, n.id, u.token
        FROM (SELECT * FROM UNNEST(\(named.map(\.environment.rawValue))::text[], \(named.map(\.attributesType))::text[],
                                   \(named.map(\.token))::text[], \(named.map { $0.deviceID ?? "" })::text[])
                            WITH ORDINALITY AS u(environment, attributes_type, token, device_id, position)
              LIMIT \(named.count)) u
        CROSS JOIN LATERAL (
            SELECT d.id FROM push_to_start_tokens d
            WHERE d.app_id = \(appID.uuid) AND d.environment = u.environment AND d.attributes_type = \
        u.attributes_type
              AND d.device_id = u.device_id AND d.token <> u.token
            ORDER BY d.last_registered_at DESC, d.id DESC LIMIT 1) d
        LEFT JOIN push_to_start_tokens n
            ON n.app_id = \(appID.uuid) AND n.environment = u.environment AND n.attributes_type = u.attributes_type
           AND n.token = u.token
        WHERE n.id IS NULL OR n.device_id IS DISTINCT FROM u.device_id
        ORDER BY u.position
        """
    }

    /// Locks the token rows a rotation moves, the device's and the token's own (if it has one), in
    /// ID order (`TokenRowLockShape`). Two parameters, not an array: a generic plan reads an array
    /// parameter as ten values, and PostgreSQL planned every call for its one or two.
    static func lockTokenRows(device deviceRow: Int64, token tokenRow: Int64?) -> PostgresQuery {
        """
        SELECT id FROM push_to_start_tokens WHERE id IN (\(deviceRow), \(tokenRow ?? deviceRow)) ORDER BY id \
        FOR UPDATE
        """
    }

    /// Moves the device's row to `token` (`DeviceRowMoveShape`). The registration's time becomes
    /// the row's: a 410 APNs dated before it (for either token) does not retire the row, and one for
    /// the old token never does (it names that token).
    static func moveDeviceRow(_ deviceRow: Int64, to token: String, at: Date) -> PostgresQuery {
        """
        UPDATE push_to_start_tokens
        SET token = \(token), last_registered_at = GREATEST(last_registered_at, \(at)),
            invalidated_at = NULL, invalidation_reason = NULL
        WHERE id = \(deviceRow)
        """
    }

    /// The advisory lock that orders a merge against the app's fan-out batches. A batch writes
    /// start ledger entries by token row ID without looking the rows up (StartLedgerInsert, for
    /// speed), so one that read its audience before a merge can write an entry for the merged row
    /// after the merge deleted it: the device would be started again by the next start. Every batch
    /// that writes ledger entries takes this lock shared for its transaction (before it touches any
    /// token row), a merge takes it exclusive before it locks its rows. So either the batch commits
    /// first, and the merge (which waited) moves its entries like all others; or the merge commits
    /// first, and the batch (which waited) writes the old row ID and then re-homes it through
    /// `merged_token_rows` (`rehomeMergedLedgerEntries`), in its own transaction. Merges are rare
    /// (a rotation to a token that had a row without the device's ID), so batches almost never
    /// wait; other apps' batches do not (the key is per app, collisions only cost a wait).
    static func mergeLockKey(_ appID: AppID) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ 0x6d61_7271_7565_6521  // FNV-1a, seeded for "marquee!"
        for byte in appID.uuid.uuidString.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// Within a fan-out batch's transaction, before it writes anything: the shared side of
    /// `mergeLockKey`.
    static func holdMergeLockShared(appID: AppID, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.rows(PreparedQuery<MergeLockSharedShape>(mergeLockShared(appID)), logger: logger)
    }

    static func mergeLockShared(_ appID: AppID) -> PostgresQuery {
        "SELECT pg_advisory_xact_lock_shared(\(mergeLockKey(appID))::bigint)"
    }

    /// Within a fan-out batch's transaction, after its ledger entries: those written for a token row
    /// merged away since the batch read its audience move to the device's row, or go where that row
    /// has its own entry for the event (the device's start is the one kept, as in a merge).
    ///
    /// Two statements, so that a batch with nothing merged (all but never) reads only
    /// `merged_token_rows` by its primary key: one statement joining that table to the event's
    /// ledger let the planner, whose statistics predate the event's entries (they are written
    /// during the run), scan every entry of the event at each commit, and a fan-out slowed as its
    /// ledger grew (0.82 of h2load's ceiling on a fresh database, 0.14 from the second run on,
    /// `run-fanout.sh` with its statements report). The shared merge lock this transaction holds
    /// keeps `merged_token_rows` as read until it commits.
    static func rehomeMergedLedgerEntries(
        appID: AppID,
        eventID: EventID,
        tokenRowIDs: [Int64],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let merged = try await connection.rows(
            PreparedQuery<MergedTokenRowsShape>(mergedTokenRows(appID: appID, among: tokenRowIDs)),
            logger: logger
        ).map { try $0.decode((Int64, Int64).self) }
        guard !merged.isEmpty else { return }
        _ = try await connection.query(
            """
            WITH moves AS (
                SELECT * FROM UNNEST(\(merged.map(\.0))::bigint[], \(merged.map(\.1))::bigint[]) AS m(from_id, into_id)
            ), stray AS (
                DELETE FROM start_ledger s USING moves m
                WHERE s.event_id = \(eventID.uuid) AND s.token_id = m.from_id
                RETURNING s.event_id, m.into_id, s.app_id, s.job_id, s.attempt, s.apns_id, s.sent_at, s.started_at
            )
            INSERT INTO start_ledger (event_id, token_id, app_id, job_id, attempt, apns_id, sent_at, started_at)
            SELECT event_id, into_id, app_id, job_id, attempt, apns_id, sent_at, started_at FROM stray
            ON CONFLICT (event_id, token_id) DO NOTHING
            """,
            logger: logger
        ).collect()
    }

    static func mergedTokenRows(appID: AppID, among tokenRowIDs: [Int64]) -> PostgresQuery {
        """
        SELECT from_id, into_id FROM merged_token_rows WHERE from_id = ANY(\(tokenRowIDs)::bigint[]) AND \
        app_id = \(appID.uuid)
        """
    }

    /// Moves the start-ledger entries of `appID`'s token row `from` to its row `into`, but for
    /// events `into` has one of: those are deleted. The ledger has no index on its tokens (migration
    /// 0021): entries are found event by event of the app, through the primary key.
    static func ledgerMoves(appID: AppID, from tokenRow: Int64, into deviceRow: Int64) -> [PostgresQuery] {
        [
            """
            UPDATE start_ledger SET token_id = \(deviceRow)
            WHERE event_id IN (SELECT id FROM events WHERE app_id = \(appID.uuid)) AND token_id = \(tokenRow)
              AND event_id NOT IN (
                  SELECT event_id FROM start_ledger
                  WHERE event_id IN (SELECT id FROM events WHERE app_id = \(appID.uuid)) AND token_id = \(deviceRow))
            """,
            deleteLedgerEntries(appID: appID, tokenRow: tokenRow),
        ]
    }

    /// Moves the starts waiting for `appID`'s token row `from` to its row `into`, unless `into` has
    /// one for the event (then it is the one kept) or was started already (the pump would prune it).
    /// Its claim is dropped: a pump that claimed it for the merged row finds it gone from its hold
    /// (`StoreError.notActive`) and the next claim sends it to the device's row. The ledger is
    /// asked through the app's events and its primary key, as in `ledgerMoves`.
    static func pendingStartMoves(appID: AppID, from tokenRow: Int64, into deviceRow: Int64) -> PostgresQuery {
        """
        UPDATE pending_starts SET token_id = \(deviceRow), claim_owner = NULL, claimed_until = NULL
        WHERE token_id = \(tokenRow)
          AND event_id NOT IN (SELECT event_id FROM pending_starts WHERE token_id = \(deviceRow))
          AND event_id NOT IN (
              SELECT event_id FROM start_ledger
              WHERE event_id IN (SELECT id FROM events WHERE app_id = \(appID.uuid)) AND token_id = \(deviceRow))
        """
    }

    /// Moves the device's row to `token`; `merging` is the token's own row, folded into it first.
    /// The caller holds `mergeLockKey` exclusive when merging; both rows are locked before anything
    /// moves, so a registration or delivery holding either commits first.
    private static func rotate(
        appID: AppID,
        deviceRow: Int64,
        to token: String,
        merging tokenRow: Int64?,
        at: Date,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        _ = try await connection.rows(
            PreparedQuery<TokenRowLockShape>(lockTokenRows(device: deviceRow, token: tokenRow)),
            logger: logger
        )
        if let tokenRow {
            // Where both rows have an entry for the same event (or job), the device's is kept: it
            // is what the device was sent; the token's goes with its row.
            let moves: [PostgresQuery] =
                ledgerMoves(appID: appID, from: tokenRow, into: deviceRow) + [
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
                    """
                    UPDATE activities SET push_to_start_token_id = \(deviceRow) WHERE push_to_start_token_id = \
                    \(tokenRow)
                    """,
                    pendingStartMoves(appID: appID, from: tokenRow, into: deviceRow),
                    // Rows merged into the token's row before now point at the device's.
                    "UPDATE merged_token_rows SET into_id = \(deviceRow) WHERE into_id = \(tokenRow)",
                    """
                    INSERT INTO merged_token_rows (from_id, into_id, app_id, merged_at)
                    VALUES (\(tokenRow), \(deviceRow), \(appID.uuid), \(at))
                    ON CONFLICT (from_id) DO UPDATE SET into_id = EXCLUDED.into_id
                    """,
                    "DELETE FROM push_to_start_tokens WHERE id = \(tokenRow)",
                ]
            for move in moves {
                _ = try await connection.query(move, logger: logger).collect()
            }
        }
        _ = try await connection.rows(
            PreparedQuery<DeviceRowMoveShape>(moveDeviceRow(deviceRow, to: token, at: at)),
            logger: logger
        )
    }
}
