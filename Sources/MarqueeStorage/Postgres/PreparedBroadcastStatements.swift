import Foundation
import MarqueeCore
import PostgresNIO

/// `PostgresStore.beginBroadcast`'s statement, prepared: the one round trip before a broadcast is
/// sent. Parsing and planning it cost PostgreSQL twice what running it did.
enum BeginBroadcastShape: PreparedQueryShape {
    static let name = "marquee_begin_broadcast"
    static let sql = PostgresStore.beginBroadcast(
        appID: AppID(),
        externalKey: "",
        environments: [],
        now: 0,
        budgetSince: Date(timeIntervalSince1970: 0)
    ).sql
}

/// A broadcast's log line, appended after APNs' answer, prepared (a scheduled broadcast's line,
/// appended before the send with its conflict clause, is not: it is not on a caller's path).
enum BroadcastLogAppendShape: PreparedQueryShape {
    static let name = "marquee_append_broadcast_log"
    static let sql = PostgresStore.insert(
        BroadcastLogEntry(
            appID: AppID(),
            channelID: ChannelID(),
            apnsRequestID: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            apnsUniqueID: nil,
            priority: .normal,
            timestamp: 0,
            status: 0,
            reason: nil,
            latency: .zero,
            sentAt: Date(timeIntervalSince1970: 0)
        ),
        onConflictDoNothing: false
    ).sql
}
