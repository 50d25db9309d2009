import Foundation
import MarqueeAPI
import MarqueeCore
import MarqueeEngine

extension APIHandler {
    func putEvent(_ input: Operations.PutEvent.Input) async throws -> Operations.PutEvent.Output {
        let app = try await authorizedApp(.publisher)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let draft = EventDraft(
            title: body.title,
            attributesType: body.attributesType,
            environments: body.environments.map(\.domain),
            storagePolicy: body.storagePolicy?.domain,
            priorityPolicy: body.priorityPolicy.map { PriorityPolicy($0) },
            plannedStart: body.plannedStart,
            plannedEnd: body.plannedEnd,
            timeline: try body.timeline?.domain(),
            lateJoiners: body.lateJoiners
        )
        switch try await engine.events.put(app: app, key: input.path.eventKey, draft: draft) {
        case .created(let view): return .created(.init(body: .json(.init(view))))
        case .existing(let view): return .ok(.init(body: .json(.init(view))))
        }
    }

    func getEvent(_ input: Operations.GetEvent.Input) async throws -> Operations.GetEvent.Output {
        let app = try await authorizedApp(.publisher)
        let view = try await engine.events.view(app: app, key: input.path.eventKey)
        var event = Components.Schemas.Event(view)
        // One statement over the event's starts and reports: cheap beside the view itself.
        event.funnel = try await engine.presence.funnels(app: app, event: view.event).map(
            Components.Schemas.EventFunnel.init
        )
        return .ok(.init(body: .json(event)))
    }

    func listEvents(_ input: Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output {
        let app = try await authorizedApp(.publisher)
        let limit = try Cursor.limit(input.query.limit)
        let views = try await engine.events.list(
            app: app,
            state: input.query.state?.domain,
            afterKey: try Cursor.decode(input.query.after),
            limit: limit
        )
        let next = views.count == limit ? views.last.map { Cursor.encode($0.event.externalKey) } : nil
        return .ok(
            .init(
                headers: .init(
                    link: nextLink(
                        "/v1/events",
                        cursor: next,
                        limit: limit,
                        query: ["state": input.query.state?.rawValue]
                    )
                ),
                body: .json(.init(events: views.map(Components.Schemas.Event.init), nextCursor: next))
            )
        )
    }

    func closeEvent(_ input: Operations.CloseEvent.Input) async throws -> Operations.CloseEvent.Output {
        let app = try await authorizedApp(.publisher)
        return .ok(.init(body: .json(.init(try await engine.events.close(app: app, key: input.path.eventKey)))))
    }

    func deleteEvent(_ input: Operations.DeleteEvent.Input) async throws -> Operations.DeleteEvent.Output {
        let app = try await authorizedApp(.publisher)
        switch try await engine.events.delete(app: app, key: input.path.eventKey) {
        case .deleted: return .noContent(.init())
        case .pending(let view): return .accepted(.init(body: .json(.init(view))))
        }
    }

    /// HEAD, and a GET `ChannelReadMiddleware` leaves to the generated route (a key without its
    /// app in the request's scope); it answers every other GET the same way itself.
    func getEventChannel(_ input: Operations.GetEventChannel.Input) async throws -> Operations.GetEventChannel.Output {
        let app = try await authorizedApp(.app)
        let view = try await engine.events.activeChannel(
            app: app,
            key: input.path.eventKey,
            environment: input.path.environment.domain
        )
        // The tag came with the (usually remembered) answer: a 304 builds nothing else.
        if let ifNoneMatch = input.headers.ifNoneMatch, view.isMatched(byIfNoneMatch: ifNoneMatch) {
            return .notModified(
                .init(headers: .init(eTag: view.entityTag, cacheControl: configuration.channelCacheControl))
            )
        }
        return .ok(
            .init(
                headers: .init(eTag: view.entityTag, cacheControl: configuration.channelCacheControl),
                body: .json(.init(view))
            )
        )
    }

    func listLiveEvents(_ input: Operations.ListLiveEvents.Input) async throws -> Operations.ListLiveEvents.Output {
        let app = try await authorizedApp(.app)
        let limit = try Cursor.limit(input.query.limit)
        let environment = input.query.environment.domain
        let page = try await engine.events.liveEvents(
            app: app,
            environment: environment,
            afterKey: try Cursor.decode(input.query.after),
            limit: limit
        )
        let next = page.nextKey.map(Cursor.encode)
        let events = page.events.map { live in
            Components.Schemas.LiveEvent(
                eventKey: live.event.externalKey,
                title: live.event.title,
                attributesType: live.event.attributesType,
                state: .init(live.event.state),
                plannedStart: live.event.plannedStart,
                plannedEnd: live.event.plannedEnd,
                channelID: live.channel.apnsChannelID ?? ""
            )
        }
        return .ok(
            .init(
                headers: .init(
                    link: nextLink(
                        "/v1/live-events",
                        cursor: next,
                        limit: limit,
                        query: ["environment": environment.rawValue]
                    )
                ),
                body: .json(.init(events: events, nextCursor: next))
            )
        )
    }
}
