import Foundation
import MarqueeAPI
import MarqueeCore
import MarqueeEngine

extension APIHandler {
    func listChannels(_ input: Operations.ListChannels.Input) async throws -> Operations.ListChannels.Output {
        let app = try await authorizedApp(.publisher)
        let limit = try Cursor.limit(input.query.limit)
        let after = try Cursor.decode(input.query.after)
        let states = input.query.state.map { Set([$0.domain]) } ?? Set(ChannelState.allCases)
        var channels: [BroadcastChannel] = []
        for environment in input.query.environment.map({ [$0.domain] }) ?? APNSEnvironment.allCases {
            channels += try await engine.channels.channels(app: app, environment: environment, states: states)
        }
        // Oldest first; the cursor is the last channel's (created, id) so that pages never overlap.
        let ordered = channels.map { (key: Self.channelSortKey($0), channel: $0) }.sorted { $0.key < $1.key }
        let page = ordered.filter { after == nil || $0.key > after! }.prefix(limit)
        let next = page.count == limit ? page.last.map { Cursor.encode($0.key) } : nil
        var eventKeys: [EventID: String] = [:]
        var answers: [Components.Schemas.Channel] = []
        for (_, channel) in page {
            var eventKey: String?
            if let eventID = channel.eventID {
                if eventKeys[eventID] == nil {
                    eventKeys[eventID] = try await engine.events.externalKey(app: app, eventID: eventID)
                }
                eventKey = eventKeys[eventID]
            }
            answers.append(.init(channel, eventKey: eventKey))
        }
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

    func reconcileChannels(_ input: Operations.ReconcileChannels.Input) async throws -> Operations.ReconcileChannels.Output {
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
        let eventKey = try await channel.eventID.asyncMap { try await engine.events.externalKey(app: app, eventID: $0) } ?? nil
        return .ok(.init(body: .json(.init(channel, eventKey: eventKey))))
    }

    func deleteChannel(_ input: Operations.DeleteChannel.Input) async throws -> Operations.DeleteChannel.Output {
        let app = try await authorizedApp(.publisher)
        let channel = try await channel(input.path.channelID, of: app)
        guard try await engine.channels.deleteChannel(app: app, channel: channel) else {
            throw Problem(
                .apnsUnavailable,
                detail: "APNs could not be reached; the channel is marked for deletion and Marquee retries in the background",
                retryAfter: 30
            )
        }
        return .noContent(.init())
    }

    private func channel(_ publicID: String, of app: App) async throws -> BroadcastChannel {
        guard let id = PublicID.parseChannel(publicID), let channel = try await engine.channels.channel(app: app, id: id) else {
            throw Problem(.notFound, detail: "channel \(publicID) not found")
        }
        return channel
    }

    static func channelSortKey(_ channel: BroadcastChannel) -> String {
        let micros = Int64(channel.createdAt.timeIntervalSince1970 * 1_000_000)
        return String(repeating: "0", count: max(0, 20 - String(micros).count)) + String(micros) + "|" + "\(channel.id)"
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
