import Foundation
import MarqueeStorage
import PostgresNIO

extension TestServer {
    /// Returns once every change committed so far has reached this server's caches: on PostgreSQL
    /// a replica hears of changes (its own included) by NOTIFY, asynchronously, and a notification
    /// that arrives late makes it forget a key or a channel-ID answer it just remembered. A test
    /// that counts answers from memory settles first, so that none is forgotten under it.
    ///
    /// A barrier: once the server listens, a NOTIFY on each of its channels, committed after every
    /// change so far, is waited for in the server's log (`recorder`, at debug or finer). PostgreSQL
    /// delivers a channel's notifications in commit order, and the server logs each one after
    /// acting on it, so the barrier heard means every earlier one was. SQLite has one replica,
    /// which forgets what it changes itself at once: nothing to wait for.
    public func settleNotifications(loggedIn recorder: FlightRecorder) async throws {
        guard let store = store as? PostgresStore else { return }
        try await waitUntil("the server listens for notifications") {
            recorder.lines.contains { $0.contains("listening for notifications") }
        }
        for channel in [PostgresStore.credentialsChannel, PostgresStore.channelAnswersChannel] {
            // An ID no event has: the channel-answer cache forgets nothing for it.
            let barrier = UUID().uuidString.lowercased()
            try await store.client.query("SELECT pg_notify(\(channel), \(barrier))")
            try await waitUntil("the server hears the barrier notification on \(channel)") {
                recorder.lines.contains {
                    $0.contains("notification heard") && $0.contains("postgres.channel=\(channel)")
                        && $0.contains("postgres.payload=\(barrier)")
                }
            }
        }
    }
}
