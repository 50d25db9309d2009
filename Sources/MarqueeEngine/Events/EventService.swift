import Foundation
import Logging
import MarqueeCore

/// Events and their channels: create idempotently by the producer's key, read, list, update, close
/// and delete. Every channel change goes through `ChannelLifecycle`. An event whose timeline is
/// automatic gets its channels from the timeline's `channels` step, a lead time before its start
/// (`EventTimeline.defersChannels`), and every change of the event replans its timeline.
public struct EventService: Sendable {
    let store: any ChannelStore & EventStore & ScheduleStore
    let clients: APNSClientRegistry
    let channels: ChannelLifecycle
    let timeline: TimelinePlanner
    /// The channel-ID answers this replica keeps; the store's changes reach it at once, another
    /// replica's through the server's listener.
    public let channelAnswers: ChannelAnswerCache
    let clock: any WallClock
    let logger: Logger

    init(
        store: any ChannelStore & EventStore & ScheduleStore,
        clients: APNSClientRegistry,
        channels: ChannelLifecycle,
        timeline: TimelinePlanner,
        channelAnswers: ChannelAnswerCache,
        clock: any WallClock,
        logger: Logger
    ) {
        self.store = store
        self.channelAnswers = channelAnswers
        self.clients = clients
        self.channels = channels
        self.timeline = timeline
        self.clock = clock
        self.logger = logger
    }

    /// What a put did.
    public enum PutOutcome: Sendable, Hashable {
        case created(EventView)
        case existing(EventView)

        public var view: EventView {
            switch self {
            case .created(let view), .existing(let view): view
            }
        }
    }

    /// Creates the event with a channel in each environment, or updates the existing one. A new
    /// event whose channels cannot all be made is not kept (and no channel is left at APNs).
    public func put(app: App, key: String, draft: EventDraft) async throws -> PutOutcome {
        try draft.validate(key: key, app: app)
        // Refuse early, before anything is written, if the app cannot reach APNs at all.
        for environment in draft.environments { _ = try await clients.client(for: app, environment: environment) }

        if let existing = try await store.event(appID: app.id, externalKey: key) {
            return .existing(try await update(existing, app: app, draft: draft))
        }
        let now = clock.now
        let (event, created) = try await store.createEvent(
            Event(
                appID: app.id,
                externalKey: key,
                title: draft.title,
                attributesType: draft.attributesType,
                environments: Set(draft.environments),
                storagePolicy: draft.storagePolicy ?? EventDraft.defaultStoragePolicy,
                priorityPolicy: draft.priorityPolicy,
                plannedStart: draft.plannedStart,
                plannedEnd: draft.plannedEnd,
                timeline: draft.timeline,
                lateJoiners: draft.lateJoiners ?? true,
                createdAt: now
            )
        )
        guard created else {
            // Another request created it first: this one is an update of that event.
            return .existing(try await update(event, app: app, draft: draft))
        }
        let made: [BroadcastChannel]
        do {
            made =
                EventTimeline.defersChannels(event: event, durations: durations(of: event), now: now)
                ? [] : try await ensureChannels(of: event, app: app, environments: event.environments)
        } catch {
            await discard(event, app: app)
            throw error
        }
        try await timeline.plan(app: app, event: event)
        logger.debug("event created", metadata: ["event.id": "\(event.id)", "event.key": "\(key)"])
        return .created(view(event, channels: made))
    }

    public func view(app: App, key: String) async throws -> EventView {
        let event = try await event(app: app, key: key)
        return view(event, channels: try await liveChannels(of: event))
    }

    /// A page of the app's events in key order.
    public func list(app: App, state: EventState?, afterKey: String?, limit: Int) async throws -> [EventView] {
        let events = try await store.events(appID: app.id, states: state.map { [$0] }, afterKey: afterKey, limit: limit)
        var views: [EventView] = []
        views.reserveCapacity(events.count)
        for event in events { views.append(view(event, channels: try await liveChannels(of: event))) }
        return views
    }

    /// Ends the event and deletes its channels; channels APNs could not delete yet stay `deleting`
    /// and are retried in the background. The event is ended first, then its pending schedules (its
    /// timeline's too) are cancelled, so that none fires on a closing event and no timeline plan
    /// made meanwhile (a step that was running) creates its steps again: the store makes no
    /// timeline step for an ended event.
    public func close(app: App, key: String) async throws -> EventView {
        var event = try await event(app: app, key: key)
        guard event.state != .cancelled else { throw EngineError.notFound(resource: "event", id: key) }
        if event.state != .ended {
            event.state = .ended
            event.updatedAt = clock.now
            event = try await store.updateEvent(event)
        }
        try await store.cancelSchedules(appID: app.id, eventID: event.id, at: clock.now)
        for channel in try await liveChannels(of: event) {
            try await channels.deleteChannel(app: app, channel: channel)
        }
        return view(event, channels: try await liveChannels(of: event))
    }

    /// What a delete did.
    public enum DeleteOutcome: Sendable, Hashable {
        /// The event and its channels are gone.
        case deleted
        /// Some channel could not be deleted at APNs yet; the event is `cancelled` until the
        /// background finishes.
        case pending(EventView)
    }

    public func delete(app: App, key: String) async throws -> DeleteOutcome {
        var event = try await event(app: app, key: key)
        // Nothing scheduled fires on a deleted event (the schedules go with its row).
        try await store.cancelSchedules(appID: app.id, eventID: event.id, at: clock.now)
        if event.state != .cancelled {
            event.state = .cancelled
            event.updatedAt = clock.now
            event = try await store.updateEvent(event)
        }
        var allDeleted = true
        for channel in try await liveChannels(of: event) {
            if try await !channels.deleteChannel(app: app, channel: channel) { allDeleted = false }
        }
        guard allDeleted else { return .pending(view(event, channels: try await liveChannels(of: event))) }
        _ = try await store.deleteEvent(appID: app.id, id: event.id)
        return .deleted
    }

    /// What `activeChannel` answers without a read, when this replica remembers it (`ChannelAnswerCache`,
    /// kept current across replicas): for the read every follower's app makes, answered where the
    /// request is read (`EventLoopAnswerHandler`). Nil: not remembered, and `activeChannel` reads.
    public func rememberedActiveChannel(app: App, key: String, environment: APNSEnvironment) -> EventChannelView? {
        channelAnswers.answer(for: ChannelAnswerCache.Key(appID: app.id, eventKey: key, environment: environment))
    }

    /// The event's active channel in `environment`, for the apps that subscribe to it: from
    /// memory when this replica has read it since it last changed (`ChannelAnswerCache`).
    public func activeChannel(app: App, key: String, environment: APNSEnvironment) async throws -> EventChannelView {
        if let kept = rememberedActiveChannel(app: app, key: key, environment: environment) { return kept }
        let cacheKey = ChannelAnswerCache.Key(appID: app.id, eventKey: key, environment: environment)
        let generation = channelAnswers.generation
        let event = try await event(app: app, key: key)
        guard let channel = try await store.liveChannel(appID: app.id, eventID: event.id, environment: environment),
            channel.state == .active, channel.apnsChannelID != nil
        else {
            throw EngineError.notFound(resource: "channel", id: "\(key)/\(environment)")
        }
        let view = EventChannelView(
            event: event,
            channel: channel,
            expiresAt: try await plannedClose(app: app, event: event)
        )
        channelAnswers.remember(view, for: cacheKey, readAt: generation)
        return view
    }

    /// When the event's running timeline will close it: its pending `close` step's due time. An
    /// event without a running timeline is closed by its producer, at no time known in advance.
    private func plannedClose(app: App, event: Event) async throws -> Date? {
        guard EventTimeline.isRunning(event) else { return nil }
        let steps = try await store.timelineSteps(appID: app.id, eventID: event.id)
        return steps.first { $0.kind == .close && ($0.state == .pending || $0.state == .running) }?.dueAt
    }

    /// A page of open events with an active channel in `environment`. `nextKey` continues the
    /// listing (it may be set even when `events` is short: events without a channel are skipped).
    public func liveEvents(
        app: App,
        environment: APNSEnvironment,
        afterKey: String?,
        limit: Int
    ) async throws -> (events: [LiveEvent], nextKey: String?) {
        let page = try await store.events(appID: app.id, states: [.scheduled, .live], afterKey: afterKey, limit: limit)
        var live: [LiveEvent] = []
        for event in page {
            if let channel = try await store.liveChannel(appID: app.id, eventID: event.id, environment: environment),
                channel.state == .active
            {
                live.append(LiveEvent(event: event, channel: channel))
            }
        }
        return (live, page.count == limit ? page.last?.externalKey : nil)
    }

    /// The key the publisher gave the event with this ID, `nil` if the event is gone (a channel or
    /// an activity outlives its event's row only after a purge).
    public func externalKey(app: App, eventID: EventID) async throws -> String? {
        try await store.event(appID: app.id, id: eventID)?.externalKey
    }

    // MARK: Steps

    func event(app: App, key: String) async throws -> Event {
        try await lookUp(key) { try await store.event(appID: app.id, externalKey: $0) }
    }

    /// The event by its key as a broadcast reads it (`BroadcastTarget`).
    func broadcastTarget(app: App, key: String) async throws -> BroadcastTarget {
        try await lookUp(key) { try await store.broadcastTarget(appID: app.id, externalKey: $0) }
    }

    /// The same with what the broadcast takes before it is sent, in one transaction
    /// (`store.beginBroadcast`): the timestamps of the event's active channels in `environments`
    /// and their priority-10 budget use since `budgetSince`.
    func beginBroadcast(
        app: App,
        key: String,
        environments: Set<APNSEnvironment>,
        now: Int64,
        budgetSince: Date
    ) async throws -> BroadcastTarget {
        try await lookUp(key) {
            try await store.beginBroadcast(
                appID: app.id,
                externalKey: $0,
                environments: environments,
                now: now,
                budgetSince: budgetSince
            )
        }
    }

    /// A read of the event by its key: a malformed key is invalid input, an unknown one not found.
    private func lookUp<Found>(_ key: String, _ read: (String) async throws -> Found?) async throws -> Found {
        if let error = EventKeyRule.check(key) { throw EngineError.invalidInput([error]) }
        guard let found = try await read(key) else { throw EngineError.notFound(resource: "event", id: key) }
        return found
    }

    private func update(_ existing: Event, app: App, draft: EventDraft) async throws -> EventView {
        guard existing.state == .scheduled || existing.state == .live else {
            throw EngineError.conflict(
                """
                event \(existing.externalKey) is \(existing.state.rawValue) and cannot be changed or reopened: \
                create a new event with another key (PUT /v1/events/{newKey})
                """
            )
        }
        if existing.attributesType != draft.attributesType {
            throw EngineError.conflict(
                "attributesType is \(existing.attributesType) for event \(existing.externalKey) and cannot change"
            )
        }
        if let policy = draft.storagePolicy, policy != existing.storagePolicy {
            throw EngineError.conflict("the storagePolicy of an event's channels is fixed when the event is created")
        }
        let environments = Set(draft.environments)
        if !existing.environments.isSubset(of: environments) {
            throw EngineError.conflict(
                "environments can be added to an event, not removed; close the event to delete its channels"
            )
        }
        var event = existing
        event.title = draft.title
        event.environments = environments
        if let priorityPolicy = draft.priorityPolicy { event.priorityPolicy = priorityPolicy }
        event.plannedStart = draft.plannedStart
        event.plannedEnd = draft.plannedEnd
        if let timeline = draft.timeline { event.timeline = timeline }
        if let lateJoiners = draft.lateJoiners { event.lateJoiners = lateJoiners }
        // Channels first: if APNs fails, the event is left as it was. Before the timeline's lead
        // time they wait for its `channels` step.
        let facts = EventTimeline.isRunning(event) ? try await timeline.facts(app: app, event: event) : nil
        let channels =
            EventTimeline.defersChannels(event: event, durations: durations(of: event), facts: facts, now: clock.now)
            ? try await liveChannels(of: existing)
            : try await ensureChannels(of: existing, app: app, environments: environments)
        if event != existing {
            event.updatedAt = clock.now
            event = try await store.updateEvent(event)
        }
        // A new planned start moves the steps not yet done; a timeline turned off cancels them.
        try await timeline.plan(app: app, event: event)
        return view(event, channels: channels)
    }

    /// The durations the event's timeline runs by.
    func durations(of event: Event) -> EventTimeline.Durations {
        timeline.policy.durations(for: event.timeline)
    }

    private func view(_ event: Event, channels: [BroadcastChannel]) -> EventView {
        EventView(
            event: event,
            channels: channels,
            timelineDurations: event.timeline.map { timeline.policy.durations(for: $0) }
        )
    }

    private func ensureChannels(
        of event: Event,
        app: App,
        environments: Set<APNSEnvironment>
    ) async throws -> [BroadcastChannel] {
        var made: [BroadcastChannel] = []
        for environment in environments.sorted(by: { $0.rawValue < $1.rawValue }) {
            made.append(try await channels.ensureChannel(app: app, event: event, environment: environment))
        }
        return made
    }

    /// Undoes a new event whose channels failed: deletes what was made at APNs and the row. If APNs
    /// cannot be reached for a deletion, the event stays `cancelled` and the janitor finishes.
    private func discard(_ event: Event, app: App) async {
        do {
            switch try await delete(app: app, key: event.externalKey) {
            case .deleted: break
            case .pending:
                logger.debug(
                    "a failed event's channels are deleted in the background",
                    metadata: ["event.id": "\(event.id)"]
                )
            }
        } catch {
            logger.warning(
                "could not undo a failed event creation; the channel janitor will",
                metadata: ["event.id": "\(event.id)", "error": "\(String(reflecting: error))"]
            )
        }
    }

    private func liveChannels(of event: Event) async throws -> [BroadcastChannel] {
        try await store.channels(appID: event.appID, eventID: event.id).filter { $0.state.isLive }
    }
}
