import Foundation
import MarqueeAPI
import MarqueeCore
import MarqueeEngine

extension APIHandler {
    func listChannels(_ input: Operations.ListChannels.Input) async throws -> Operations.ListChannels.Output {
        let app = try await authorizedApp(.publisher)
        let limit = try Cursor.limit(input.query.limit)
        let page = try await engine.channels.channelPage(
            app: app,
            environments: input.query.environment.map { [$0.domain] } ?? Set(APNSEnvironment.allCases),
            states: input.query.state.map { [$0.domain] } ?? Set(ChannelState.allCases),
            after: try Cursor.decode(input.query.after).map(Self.channelPosition),
            limit: limit
        )
        let next = page.count == limit ? page.last.map { Cursor.encode(Self.channelCursorKey($0.channel)) } : nil
        let answers = page.map { Components.Schemas.Channel($0.channel, eventKey: $0.eventKey) }
        return .ok(
            .init(
                headers: .init(
                    link: nextLink(
                        "/v1/channels",
                        cursor: next,
                        limit: limit,
                        query: ["environment": input.query.environment?.rawValue, "state": input.query.state?.rawValue]
                    )
                ),
                body: .json(.init(channels: answers, nextCursor: next))
            )
        )
    }

    func getChannelQuota(_ input: Operations.GetChannelQuota.Input) async throws -> Operations.GetChannelQuota.Output {
        let app = try await authorizedApp(.publisher)
        var quotas: [Components.Schemas.ChannelQuota] = []
        for environment in app.environments.sortedForDisplay {
            let quota = try await engine.channels.quota(app: app, environment: environment)
            quotas.append(
                .init(
                    environment: .init(environment),
                    used: quota.used,
                    limit: quota.limit,
                    warningAt: quota.warningAt,
                    warning: quota.isWarning
                )
            )
        }
        return .ok(.init(body: .json(.init(quotas: quotas))))
    }

    func reconcileChannels(
        _ input: Operations.ReconcileChannels.Input
    ) async throws -> Operations.ReconcileChannels.Output {
        let app = try await authorizedApp(.publisher)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let report = try await engine.reconciler.reconcile(
            app: app,
            environment: body.environment.domain,
            deleteOrphans: body.deleteOrphans ?? false
        )
        return .ok(
            .init(
                body: .json(
                    .init(
                        environment: body.environment,
                        apnsChannels: report.apnsChannels,
                        orphansRecorded: report.orphansRecorded,
                        orphansDeleted: report.orphansDeleted,
                        markedDeleted: report.markedDeleted.map(PublicID.channel),
                        unchanged: report.unchanged
                    )
                )
            )
        )
    }

    func getChannel(_ input: Operations.GetChannel.Input) async throws -> Operations.GetChannel.Output {
        let app = try await authorizedApp(.publisher)
        let channel = try await channel(input.path.channelID, of: app)
        let eventKey =
            try await channel.eventID.asyncMap { try await engine.events.externalKey(app: app, eventID: $0) } ?? nil
        return .ok(.init(body: .json(.init(channel, eventKey: eventKey))))
    }

    func deleteChannel(_ input: Operations.DeleteChannel.Input) async throws -> Operations.DeleteChannel.Output {
        let app = try await authorizedApp(.publisher)
        let channel = try await channel(input.path.channelID, of: app)
        guard try await engine.channels.deleteChannel(app: app, channel: channel) else {
            throw Problem(
                .apnsUnavailable,
                detail:
                    """
                    APNs could not be reached; the channel is marked for deletion and Marquee retries in the \
                    background
                    """,
                retryAfter: 30
            )
        }
        return .noContent(.init())
    }

    private func channel(_ publicID: String, of app: App) async throws -> BroadcastChannel {
        guard let id = PublicID.parseChannel(publicID),
            let channel = try await engine.channels.channel(app: app, id: id)
        else {
            throw Problem(.notFound, detail: "channel \(publicID) not found")
        }
        return channel
    }

    /// The list cursor's key: the channel's creation time and its ID.
    static func channelCursorKey(_ channel: BroadcastChannel) -> String {
        Cursor.key(channel.createdAt, channel.id)
    }

    static func channelPosition(_ key: String) throws -> ChannelListPosition {
        let (createdAt, id) = try Cursor.timeAndID(key)
        guard let id = ChannelID(uuidString: id) else { throw Cursor.notIssued }
        return ChannelListPosition(createdAt: createdAt, id: id)
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
