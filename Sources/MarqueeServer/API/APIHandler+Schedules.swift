import Foundation
import MarqueeAPI
import MarqueeCore
import MarqueeEngine
import OpenAPIRuntime

extension APIHandler {
    func listEventSchedules(
        _ input: Operations.ListEventSchedules.Input
    ) async throws -> Operations.ListEventSchedules.Output {
        let app = try await authorizedApp(.publisher)
        let limit = try Cursor.limit(input.query.limit)
        let after = try Cursor.decode(input.query.after).map(Self.schedulePosition)
        let views = try await engine.schedules.schedules(
            app: app,
            eventKey: input.path.eventKey,
            after: after,
            limit: limit
        )
        let next = views.count == limit ? views.last.map { Cursor.encode(Self.scheduleCursorKey($0.schedule)) } : nil
        return .ok(
            .init(
                headers: .init(
                    link: nextLink("/v1/events/\(input.path.eventKey)/schedules", cursor: next, limit: limit)
                ),
                body: .json(.init(schedules: views.map(Components.Schemas.Schedule.init), nextCursor: next))
            )
        )
    }

    func getSchedule(_ input: Operations.GetSchedule.Input) async throws -> Operations.GetSchedule.Output {
        let app = try await authorizedApp(.publisher)
        return .ok(
            .init(
                body: .json(
                    .init(try await engine.schedules.schedule(app: app, id: try Self.scheduleID(input.path.scheduleID)))
                )
            )
        )
    }

    func cancelSchedule(_ input: Operations.CancelSchedule.Input) async throws -> Operations.CancelSchedule.Output {
        let app = try await authorizedApp(.publisher)
        return .ok(
            .init(
                body: .json(
                    .init(try await engine.schedules.cancel(app: app, id: try Self.scheduleID(input.path.scheduleID)))
                )
            )
        )
    }

    static func scheduleLocation(_ view: ScheduleView) -> String {
        "/v1/schedules/\(PublicID.schedule(view.schedule.id))"
    }

    static func scheduleID(_ text: String) throws -> ScheduleID {
        guard let id = PublicID.parseSchedule(text) else {
            throw Problem(.notFound, detail: "schedule \(text) not found")
        }
        return id
    }

    /// The list cursor's key: the schedule's due time and its ID.
    static func scheduleCursorKey(_ schedule: Schedule) -> String {
        Cursor.key(schedule.dueAt, schedule.id)
    }

    static func schedulePosition(_ key: String) throws -> ScheduleListPosition {
        let (dueAt, id) = try Cursor.timeAndID(key)
        guard let id = ScheduleID(uuidString: id) else { throw Cursor.notIssued }
        return ScheduleListPosition(dueAt: dueAt, id: id)
    }
}

extension Components.Schemas.Schedule {
    init(_ view: ScheduleView) {
        let schedule = view.schedule
        self.init(
            id: PublicID.schedule(schedule.id),
            eventKey: view.eventKey,
            kind: .init(rawValue: schedule.kind.rawValue) ?? .start,
            origin: .init(rawValue: schedule.origin.rawValue) ?? .api,
            at: schedule.dueAt,
            state: .init(rawValue: schedule.state.rawValue) ?? .pending,
            outcome: view.outcome.map(Components.Schemas.ScheduleOutcome.init),
            lastError: schedule.lastError,
            attempts: schedule.attempts,
            performedAt: schedule.performedAt,
            createdAt: schedule.createdAt,
            updatedAt: schedule.updatedAt
        )
        switch view.action {
        case .start(let request)?: start = Components.Schemas.StartRequest(request)
        case .broadcast(let draft)?: broadcast = Components.Schemas.BroadcastRequest(draft)
        case nil: break
        }
    }
}

extension Components.Schemas.ScheduleOutcome {
    init(_ outcome: ScheduleOutcome) {
        self.init(
            jobs: outcome.startJobs.isEmpty ? nil : outcome.startJobs.map(PublicID.job),
            broadcast: outcome.broadcast?.map(Components.Schemas.BroadcastChannelResult.init),
            channels: outcome.channels?.map {
                .init(environment: .init($0.environment), id: PublicID.channel($0.id), channelID: $0.channelID)
            },
            closed: outcome.closed ? true : nil,
            skipped: outcome.skipped
        )
    }
}

extension Components.Schemas.BroadcastChannelResult {
    /// A scheduled broadcast's result, as the immediate call would have answered it.
    init(_ result: ScheduledBroadcastResult) {
        self.init(
            environment: .init(result.environment),
            status: .init(rawValue: result.status.rawValue) ?? .skipped,
            channelID: result.channelID,
            apnsRequestID: result.apnsRequestID,
            apnsUniqueID: result.apnsUniqueID,
            timestamp: result.timestamp,
            apnsExpiration: result.apnsExpiration,
            priority: result.priority,
            requestedPriority: result.requestedPriority,
            downgraded: result.downgraded,
            reason: result.reason,
            httpStatus: result.httpStatus,
            apnsReason: result.apnsReason,
            channelDeleted: result.channelDeleted,
            latencyMicroseconds: result.latencyMicroseconds
        )
    }
}

extension Components.Schemas.StartRequest {
    /// A scheduled start as it was accepted (Apple's objects back in the API's types).
    init?(_ request: StartRequest) {
        guard let attributes: AttributesPayload = JSONPassThrough.decoded(request.attributes),
            let contentState: ContentStatePayload = JSONPassThrough.decoded(request.contentState),
            let alert: AlertPayload = JSONPassThrough.decoded(request.alert)
        else { return nil }
        self.init(
            environment: .init(request.environment),
            attributes: attributes,
            contentState: contentState,
            alert: alert,
            audience: request.audience.isEveryone
                ? nil
                : .init(
                    tags: request.audience.tags,
                    userIDs: request.audience.userIDs,
                    tokens: request.audience.tokens
                ),
            inputPushToken: request.inputPushToken ? true : nil,
            lateJoiners: Components.Schemas.StartLateJoiners(request.lateJoiners)
        )
    }
}

extension Components.Schemas.StartLateJoiners {
    /// The late-join choice as it was accepted; `nil` when the start took the defaults.
    init?(_ choice: LateJoinChoice) {
        guard choice.enabled != nil || choice.alert != nil else { return nil }
        self.init(enabled: choice.enabled, alert: choice.alert.flatMap { JSONPassThrough.decoded($0) })
    }
}

extension Components.Schemas.BroadcastRequest {
    /// A scheduled broadcast as it was accepted.
    init?(_ draft: BroadcastDraft) {
        guard let contentState: OpenAPIObjectContainer = JSONPassThrough.decoded(draft.contentState) else { return nil }
        self.init(
            event: .init(draft.event),
            contentState: contentState,
            alert: draft.alert.flatMap { JSONPassThrough.decoded($0.jsonObject) },
            staleDate: draft.staleDate,
            dismissalDate: draft.dismissalDate,
            relevanceScore: draft.relevanceScore,
            priority: draft.priority.flatMap { PriorityPayload(rawValue: $0.rawValue) },
            important: draft.important ? true : nil,
            environments: draft.environments?.map(Components.Schemas.Environment.init)
        )
    }
}

extension Components.Schemas.EventTimeline {
    /// The event's timeline with the durations that apply to it.
    init(_ settings: EventTimelineSettings, durations: EventTimeline.Durations?) {
        self.init(
            automatic: settings.automatic,
            start: settings.start.flatMap(Components.Schemas.TimelineStart.init),
            channelLeadSeconds: durations.map { Int($0.channelLead) } ?? settings.channelLeadSeconds,
            endAfterSeconds: durations.map { Int($0.endAfter) } ?? settings.endAfterSeconds,
            deleteChannelsAfterSeconds: durations.map { Int($0.deleteChannelsAfter) }
                ?? settings.deleteChannelsAfterSeconds
        )
    }

    /// The settings a producer put.
    func domain() throws -> EventTimelineSettings {
        EventTimelineSettings(
            automatic: automatic,
            start: try start.map { start in
                TimelineStart(
                    environment: start.environment?.domain,
                    attributes: try APIHandler.passThrough(start.attributes, pointer: "/timeline/start/attributes"),
                    contentState: try APIHandler.passThrough(
                        start.contentState,
                        pointer: "/timeline/start/contentState"
                    ),
                    alert: try APIHandler.passThrough(start.alert, pointer: "/timeline/start/alert"),
                    tags: start.audience?.tags ?? [],
                    userIDs: start.audience?.userIDs ?? [],
                    tokens: start.audience?.tokens ?? [],
                    inputPushToken: start.inputPushToken ?? false
                )
            },
            channelLeadSeconds: channelLeadSeconds,
            endAfterSeconds: endAfterSeconds,
            deleteChannelsAfterSeconds: deleteChannelsAfterSeconds
        )
    }
}

extension Components.Schemas.TimelineStart {
    init?(_ start: TimelineStart) {
        guard let attributes: AttributesPayload = JSONPassThrough.decoded(start.attributes),
            let contentState: ContentStatePayload = JSONPassThrough.decoded(start.contentState),
            let alert: AlertPayload = JSONPassThrough.decoded(start.alert)
        else { return nil }
        let everyone = start.tags.isEmpty && start.userIDs.isEmpty && start.tokens.isEmpty
        self.init(
            environment: start.environment.map(Components.Schemas.Environment.init),
            attributes: attributes,
            contentState: contentState,
            alert: alert,
            audience: everyone ? nil : .init(tags: start.tags, userIDs: start.userIDs, tokens: start.tokens),
            inputPushToken: start.inputPushToken ? true : nil
        )
    }
}

extension JSONPassThrough {
    /// One of Apple's objects as kept by Marquee, in one of the API's types (for answers).
    static func decoded<Value: Decodable>(_ object: JSONObject) -> Value? {
        guard let data = try? JSONEncoder().encode(JSONValue.object(object)) else { return nil }
        return try? JSONDecoder().decode(Value.self, from: data)
    }
}
