import MarqueeCore

extension EventStore {
    /// Runs `body` on each of the app's events in `states`, a page of 200 at a time in key order:
    /// the replica's periodic passes over every event (`ChannelJanitor`, `FunnelReporter`).
    func forEachEvent(
        of app: App,
        states: Set<EventState>,
        _ body: (Event) async throws -> Void
    ) async throws {
        var after: String?
        while true {
            let page = try await events(appID: app.id, states: states, afterKey: after, limit: 200)
            for event in page { try await body(event) }
            guard page.count == 200, let last = page.last else { return }
            after = last.externalKey
        }
    }
}
