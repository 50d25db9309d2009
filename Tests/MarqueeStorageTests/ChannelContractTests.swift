import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

@Suite("Channels")
struct ChannelContractTests {
    @Test(
        "concurrent reservations for one event and environment leave exactly one live row",
        arguments: Backend.allCases
    )
    func concurrentReservation(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let store = fixture.store
            let reservations = try await withThrowingTaskGroup(of: ChannelReservation.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        try await fixture.reserve(event, .sandbox)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let reserved = reservations.filter { if case .reserved = $0 { true } else { false } }
            #expect(reserved.count == 1)
            #expect(Set(reservations.map(\.channel.id)).count == 1)
            #expect(try await store.channelCount(appID: app.id, environment: .sandbox, states: ChannelState.live) == 1)
            // The other environment is a separate channel.
            let production = try await fixture.reserve(event, .production)
            #expect(production.channel.id != reservations[0].channel.id)
        }
    }

    @Test(
        "a channel moves creating → active → deleting → deleted, and then a new one can be reserved",
        arguments: Backend.allCases
    )
    func lifecycle(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let channel = try await fixture.makeActiveChannel(for: event)
            #expect(channel.state == .active)
            #expect(channel.apnsChannelID != nil)
            #expect(
                try await fixture.store.liveChannel(appID: app.id, eventID: event.id, environment: .sandbox) == channel
            )

            await #expect(
                throws: StoreError.invalidTransition(
                    entity: "channel",
                    id: channel.id.description,
                    from: "active",
                    to: "active"
                )
            ) {
                _ = try await fixture.store.activateChannel(
                    appID: app.id,
                    id: channel.id,
                    apnsChannelID: "x",
                    at: fixture.now
                )
            }
            _ = try await fixture.store.transitionChannel(appID: app.id, id: channel.id, to: .deleting, at: fixture.now)
            let deleted = try await fixture.store.transitionChannel(
                appID: app.id,
                id: channel.id,
                to: .deleted,
                at: fixture.now
            )
            #expect(deleted.state == .deleted)
            await #expect(throws: StoreError.self) {
                _ = try await fixture.store.transitionChannel(
                    appID: app.id,
                    id: channel.id,
                    to: .active,
                    at: fixture.now
                )
            }
            #expect(try await fixture.store.liveChannel(appID: app.id, eventID: event.id, environment: .sandbox) == nil)
            let next = try await fixture.reserve(event, .sandbox)
            guard case .reserved(let fresh) = next else {
                Issue.record("expected a new reservation after deletion")
                return
            }
            #expect(fresh.id != channel.id)
        }
    }

    @Test("another app can neither see nor change a channel", arguments: Backend.allCases)
    func tenantScoped(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            let event = try await fixture.makeEvent(for: app)
            let channel = try await fixture.makeActiveChannel(for: event)
            #expect(try await fixture.store.channel(appID: other.id, id: channel.id) == nil)
            await #expect(throws: StoreError.notFound(entity: "channel", id: channel.id.description)) {
                _ = try await fixture.store.transitionChannel(
                    appID: other.id,
                    id: channel.id,
                    to: .deleting,
                    at: fixture.now
                )
            }
            await #expect(throws: StoreError.notFound(entity: "event", id: event.id.description)) {
                _ = try await fixture.reserve(event, .sandbox, as: other.id)
            }
        }
    }

    @Test(
        "broadcast timestamps strictly increase per channel, even when callers race and the clock stands still",
        arguments: Backend.allCases
    )
    func monotonicTimestamps(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let channel = try await fixture.makeActiveChannel(for: event)
            let store = fixture.store
            let now: Int64 = 1_767_225_600
            let timestamps = try await withThrowingTaskGroup(of: Int64.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await store.nextBroadcastTimestamp(appID: app.id, channelID: channel.id, now: now)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(timestamps.sorted() == Array(now..<(now + 20)))
            // A clock far ahead wins; a clock that stepped back does not.
            #expect(
                try await store.nextBroadcastTimestamp(appID: app.id, channelID: channel.id, now: now + 100) == now
                    + 100
            )
            #expect(try await store.nextBroadcastTimestamp(appID: app.id, channelID: channel.id, now: now) == now + 101)
            #expect(try await store.channel(appID: app.id, id: channel.id)?.lastBroadcastTimestamp == now + 101)
        }
    }

    @Test("a channel that is not active takes no broadcast", arguments: Backend.allCases)
    func noBroadcastWhenInactive(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let reservation = try await fixture.reserve(event, .sandbox)
            await #expect(
                throws: StoreError.notActive(
                    entity: "channel",
                    id: reservation.channel.id.description,
                    state: "creating"
                )
            ) {
                _ = try await fixture.store.nextBroadcastTimestamp(
                    appID: app.id,
                    channelID: reservation.channel.id,
                    now: 1
                )
            }
        }
    }

    @Test(
        """
        taking a timestamp by event finds its active channel and continues the same sequence; another app or \
        environment finds none
        """,
        arguments: Backend.allCases
    )
    func takeTimestampByEvent(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            let event = try await fixture.makeEvent(for: app)
            let store = fixture.store
            let now: Int64 = 1_767_225_600
            // Only `creating`: no active channel yet.
            let reservation = try await fixture.reserve(event, .sandbox)
            #expect(
                try await store.takeBroadcastTimestamp(
                    appID: app.id,
                    eventID: event.id,
                    environment: .sandbox,
                    now: now
                ) == nil
            )
            let channel = try await store.activateChannel(
                appID: app.id,
                id: reservation.channel.id,
                apnsChannelID: "Y2hhbm5lbA==",
                at: fixture.now
            )

            let taken = try await store.takeBroadcastTimestamp(
                appID: app.id,
                eventID: event.id,
                environment: .sandbox,
                now: now
            )
            #expect(taken?.id == channel.id)
            #expect(taken?.apnsChannelID == "Y2hhbm5lbA==")
            #expect(taken?.lastBroadcastTimestamp == now)
            #expect(try await store.nextBroadcastTimestamp(appID: app.id, channelID: channel.id, now: now) == now + 1)
            #expect(
                try await store.takeBroadcastTimestamp(
                    appID: app.id,
                    eventID: event.id,
                    environment: .sandbox,
                    now: now
                )?.lastBroadcastTimestamp == now + 2
            )

            #expect(
                try await store.takeBroadcastTimestamp(
                    appID: app.id,
                    eventID: event.id,
                    environment: .production,
                    now: now
                ) == nil
            )
            #expect(
                try await store.takeBroadcastTimestamp(
                    appID: other.id,
                    eventID: event.id,
                    environment: .sandbox,
                    now: now
                ) == nil
            )
            #expect(try await store.channel(appID: app.id, id: channel.id)?.lastBroadcastTimestamp == now + 2)
        }
    }

    @Test(
        """
        beginning a broadcast reads the event and takes each asked environment's timestamp with its budget use, \
        in one step
        """,
        arguments: Backend.allCases
    )
    func beginBroadcast(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            let event = try await fixture.makeEvent(for: app)
            let store = fixture.store
            let now: Int64 = 1_767_225_600
            let window = fixture.now.addingTimeInterval(-3600)
            let both: Set<APNSEnvironment> = [.sandbox, .production]
            // No active channel yet: the event alone.
            let bare = try #require(
                try await store.beginBroadcast(
                    appID: app.id,
                    externalKey: event.externalKey,
                    environments: both,
                    now: now,
                    budgetSince: window
                )
            )
            #expect(bare.event == event)
            #expect(bare.taken.isEmpty)
            #expect(bare.updateTokenEnvironments.isEmpty)

            let sandbox = try await fixture.makeActiveChannel(for: event)
            let production = try await fixture.makeActiveChannel(for: event, environment: .production)
            for (index, priority) in [APNSPriority.immediate, .immediate, .normal].enumerated() {
                try await store.appendBroadcastLog(
                    BroadcastLogEntry(
                        appID: app.id,
                        channelID: sandbox.id,
                        apnsRequestID: UUID(),
                        apnsUniqueID: nil,
                        priority: priority,
                        timestamp: now - 10 + Int64(index),
                        status: 200,
                        reason: nil,
                        latency: .microseconds(900),
                        sentAt: fixture.now
                    )
                )
            }
            let began = try #require(
                try await store.beginBroadcast(
                    appID: app.id,
                    externalKey: event.externalKey,
                    environments: both,
                    now: now,
                    budgetSince: window
                )
            )
            #expect(began.event == event)
            #expect(began.taken[.sandbox]?.channel.id == sandbox.id)
            #expect(began.taken[.sandbox]?.channel.apnsChannelID == sandbox.apnsChannelID)
            #expect(began.taken[.sandbox]?.channel.lastBroadcastTimestamp == now)
            #expect(began.taken[.sandbox]?.immediateSent == 2)
            #expect(began.taken[.production]?.channel.id == production.id)
            #expect(began.taken[.production]?.immediateSent == 0)
            // The same sequence as takeBroadcastTimestamp's; only the environments asked for.
            #expect(
                try await store.takeBroadcastTimestamp(
                    appID: app.id,
                    eventID: event.id,
                    environment: .sandbox,
                    now: now
                )?.lastBroadcastTimestamp == now + 1
            )
            let sandboxOnly = try #require(
                try await store.beginBroadcast(
                    appID: app.id,
                    externalKey: event.externalKey,
                    environments: [.sandbox],
                    now: now,
                    budgetSince: fixture.now.addingTimeInterval(1)
                )
            )
            #expect(sandboxOnly.taken[.sandbox]?.channel.lastBroadcastTimestamp == now + 2)
            #expect(sandboxOnly.taken[.sandbox]?.immediateSent == 0)
            #expect(sandboxOnly.taken[.production] == nil)
            #expect(try await store.channel(appID: app.id, id: production.id)?.lastBroadcastTimestamp == now)

            // Another app's key finds nothing; an ended event is read but nothing is taken.
            #expect(
                try await store.beginBroadcast(
                    appID: other.id,
                    externalKey: event.externalKey,
                    environments: both,
                    now: now,
                    budgetSince: window
                ) == nil
            )
            #expect(try await store.setEventState(appID: app.id, id: event.id, state: .ended, at: fixture.now))
            let ended = try #require(
                try await store.beginBroadcast(
                    appID: app.id,
                    externalKey: event.externalKey,
                    environments: both,
                    now: now,
                    budgetSince: window
                )
            )
            #expect(ended.event.state == .ended)
            #expect(ended.taken.isEmpty)
            #expect(try await store.channel(appID: app.id, id: sandbox.id)?.lastBroadcastTimestamp == now + 2)
        }
    }

    @Test("an orphan found at APNs is recorded once", arguments: Backend.allCases)
    func orphans(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let first = try await fixture.store.recordOrphanedChannel(
                appID: app.id,
                environment: .production,
                apnsChannelID: "b3JwaGFu",
                storagePolicy: .mostRecentMessageStored,
                at: fixture.now
            )
            let again = try await fixture.store.recordOrphanedChannel(
                appID: app.id,
                environment: .production,
                apnsChannelID: "b3JwaGFu",
                storagePolicy: .mostRecentMessageStored,
                at: fixture.now
            )
            #expect(first.state == .orphaned)
            #expect(first.eventID == nil)
            #expect(again.id == first.id)
            #expect(
                try await fixture.store.channels(appID: app.id, environment: .production, states: [.orphaned]) == [
                    first
                ]
            )
        }
    }

    @Test(
        "the channel list pages oldest first with each event's key, in the app, environments and states asked",
        arguments: Backend.allCases
    )
    func channelPages(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            var expected: [ListedChannel] = []
            // Stored at microseconds (…294319, …294324) whose `Date` from the API's cursor a
            // truncating bind would send a microsecond early; two rows share each time.
            let times = [1_795_887_794.294_319_5, 1_795_887_794.294_324_5].map { Date(timeIntervalSince1970: $0) }
            for (index, key) in ["match-1", "match-2", "match-3"].enumerated() {
                let event = try await fixture.makeEvent(for: app, key: key)
                for environment in [APNSEnvironment.sandbox, .production] {
                    let channel = try await fixture.store.reserveChannel(
                        appID: app.id,
                        eventID: event.id,
                        environment: environment,
                        storagePolicy: event.storagePolicy,
                        requestID: UUID(),
                        at: times[index % 2]
                    ).channel
                    expected.append(.init(channel: channel, eventKey: key))
                }
            }
            let orphan = try await fixture.store.recordOrphanedChannel(
                appID: app.id,
                environment: .production,
                apnsChannelID: "b3JwaGFu",
                storagePolicy: .noMessageStored,
                at: fixture.now
            )
            expected.append(.init(channel: orphan, eventKey: nil))
            let other = try await fixture.makeApp("Other")
            _ = try await fixture.makeActiveChannel(for: try await fixture.makeEvent(for: other))
            // Rows made at the same instant are ordered by ID, so pages never overlap.
            expected.sort {
                ($0.channel.createdAt, $0.channel.id.description) < ($1.channel.createdAt, $1.channel.id.description)
            }

            var listed: [ListedChannel] = []
            var after: ChannelListPosition?
            repeat {
                let page = try await fixture.store.channelPage(
                    appID: app.id,
                    environments: [.sandbox, .production],
                    states: Set(ChannelState.allCases),
                    after: after,
                    limit: 2
                )
                #expect(page.count <= 2)
                listed += page
                // The position as the API's cursor carries it: the time in whole microseconds.
                after = page.count == 2 ? page.last.map { Self.cursorPosition($0.channel) } : nil
            } while after != nil && listed.count <= expected.count
            #expect(listed == expected)

            let creatingInProduction = try await fixture.store.channelPage(
                appID: app.id,
                environments: [.production],
                states: [.creating],
                after: nil,
                limit: 100
            )
            #expect(creatingInProduction.compactMap(\.eventKey).sorted() == ["match-1", "match-2", "match-3"])
            #expect(
                creatingInProduction.allSatisfy {
                    $0.channel.environment == .production && $0.channel.state == .creating
                }
            )
        }
    }

    @Test(
        "the broadcast log keeps each request, newest first, with its content-state and alert",
        arguments: Backend.allCases
    )
    func broadcastLog(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let channel = try await fixture.makeActiveChannel(for: event)
            var entries: [BroadcastLogEntry] = []
            for index in 0..<3 {
                let entry = BroadcastLogEntry(
                    appID: app.id,
                    channelID: channel.id,
                    apnsRequestID: UUID(),
                    apnsUniqueID: index == 0 ? nil : "unique-\(index)",
                    priority: .immediate,
                    timestamp: 1_767_225_600 + Int64(index),
                    status: index == 2 ? 429 : 200,
                    reason: index == 2 ? .tooManyRequests : nil,
                    latency: .microseconds(1500 + index),
                    sentAt: fixture.now,
                    contentState: ["homeScore": .integer(Int64(index))],
                    // Keys in sorted order: a stored object is read back with its keys sorted.
                    alert: index == 1 ? ["body": "Saka scores", "sound": "default", "title": "Goal!"] : nil
                )
                var stored = entry
                stored.sequence = try await fixture.store.appendBroadcastLog(entry)
                entries.append(stored)
            }
            #expect(
                try await fixture.store.broadcastLog(appID: app.id, channelID: channel.id, limit: 10)
                    == entries.reversed()
            )
            let other = try await fixture.makeApp("Other")
            #expect(try await fixture.store.broadcastLog(appID: other.id, channelID: channel.id, limit: 10).isEmpty)
        }
    }

    @Test(
        "the broadcast log pages newest first by its sequence and keeps the event and the downgrade",
        arguments: Backend.allCases
    )
    func broadcastLogPages(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let channel = try await fixture.makeActiveChannel(for: event)
            var sequences: [Int64] = []
            for index in 0..<5 {
                sequences.append(
                    try await fixture.store.appendBroadcastLog(
                        BroadcastLogEntry(
                            appID: app.id,
                            channelID: channel.id,
                            apnsRequestID: UUID(),
                            apnsUniqueID: nil,
                            priority: index == 3 ? .normal : .immediate,
                            timestamp: 1_767_225_600 + Int64(index),
                            status: 200,
                            reason: nil,
                            latency: .microseconds(900),
                            sentAt: fixture.now,
                            event: index == 4 ? .end : .update,
                            downgraded: index == 3
                        )
                    )
                )
            }
            #expect(sequences == sequences.sorted() && Set(sequences).count == 5)
            let first = try await fixture.store.broadcastLog(
                appID: app.id,
                channelID: channel.id,
                before: nil,
                limit: 2
            )
            #expect(first.map(\.timestamp) == [1_767_225_604, 1_767_225_603])
            #expect(first.map(\.event) == [.end, .update])
            #expect(first.map(\.downgraded) == [false, true])
            let second = try await fixture.store.broadcastLog(
                appID: app.id,
                channelID: channel.id,
                before: first.last?.sequence,
                limit: 2
            )
            #expect(second.map(\.timestamp) == [1_767_225_602, 1_767_225_601])
            let last = try await fixture.store.broadcastLog(
                appID: app.id,
                channelID: channel.id,
                before: second.last?.sequence,
                limit: 2
            )
            #expect(last.map(\.timestamp) == [1_767_225_600])
        }
    }

    @Test("the priority budget counts accepted broadcasts at one priority since a time", arguments: Backend.allCases)
    func broadcastCount(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let channel = try await fixture.makeActiveChannel(for: event)
            let rows: [(APNSPriority, Int, TimeInterval)] = [
                (.immediate, 200, -4000),  // more than an hour ago
                (.immediate, 200, -1800),
                (.immediate, 200, -10),
                (.immediate, 429, -5),  // refused: not delivered, not counted
                (.normal, 200, -5),
            ]
            for (priority, status, offset) in rows {
                try await fixture.store.appendBroadcastLog(
                    BroadcastLogEntry(
                        appID: app.id,
                        channelID: channel.id,
                        apnsRequestID: UUID(),
                        apnsUniqueID: nil,
                        priority: priority,
                        timestamp: 1,
                        status: status,
                        reason: status == 200 ? nil : .tooManyRequests,
                        latency: .microseconds(1),
                        sentAt: fixture.now.addingTimeInterval(offset)
                    )
                )
            }
            let hourAgo = fixture.now.addingTimeInterval(-3600)
            #expect(
                try await fixture.store.broadcastCount(
                    appID: app.id,
                    channelID: channel.id,
                    priority: .immediate,
                    since: hourAgo
                ) == 2
            )
            #expect(
                try await fixture.store.broadcastCount(
                    appID: app.id,
                    channelID: channel.id,
                    priority: .normal,
                    since: hourAgo
                ) == 1
            )
            let other = try await fixture.makeApp("Other")
            #expect(
                try await fixture.store.broadcastCount(
                    appID: other.id,
                    channelID: channel.id,
                    priority: .immediate,
                    since: hourAgo
                ) == 0
            )
        }
    }

    @Test(
        "an event's channels are listed in every state, oldest first, for its own app only",
        arguments: Backend.allCases
    )
    func channelsOfEvent(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            let event = try await fixture.makeEvent(for: app)
            let sibling = try await fixture.makeEvent(for: app, key: "match-2")
            _ = try await fixture.makeActiveChannel(for: sibling)

            let first = try await fixture.makeActiveChannel(for: event)
            fixture.clock.advance(by: 1)
            let deleted = try await fixture.store.transitionChannel(
                appID: app.id,
                id: first.id,
                to: .deleted,
                at: fixture.now
            )
            fixture.clock.advance(by: 1)
            let production = try await fixture.reserve(event, .production).channel
            fixture.clock.advance(by: 1)
            let second = try await fixture.makeActiveChannel(for: event)

            #expect(
                try await fixture.store.channels(appID: app.id, eventID: event.id) == [deleted, production, second]
            )
            #expect(try await fixture.store.channels(appID: other.id, eventID: event.id).isEmpty)
            #expect(try await fixture.store.channels(appID: app.id, eventID: EventID()).isEmpty)
        }
    }

    @Test(
        "activation absorbs an orphan recorded meanwhile for the same APNs ID, app and environment",
        arguments: Backend.allCases
    )
    func activationAbsorbsOrphan(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            let event = try await fixture.makeEvent(for: app)
            let reservation = try await fixture.reserve(event, .sandbox)
            let apnsID = "YWJzb3JiZWQ="
            func orphan(_ appID: AppID, _ environment: APNSEnvironment) async throws -> BroadcastChannel {
                try await fixture.store.recordOrphanedChannel(
                    appID: appID,
                    environment: environment,
                    apnsChannelID: apnsID,
                    storagePolicy: event.storagePolicy,
                    at: fixture.now
                )
            }
            let absorbed = try await orphan(app.id, .sandbox)
            let otherEnvironment = try await orphan(app.id, .production)
            let otherApp = try await orphan(other.id, .sandbox)

            let active = try await fixture.store.activateChannel(
                appID: app.id,
                id: reservation.channel.id,
                apnsChannelID: apnsID,
                at: fixture.now
            )
            #expect(active.id == reservation.channel.id)
            #expect(active.state == .active)
            #expect(active.apnsChannelID == apnsID)
            #expect(try await fixture.store.channel(appID: app.id, id: absorbed.id) == nil)
            #expect(try await fixture.store.channels(appID: app.id, environment: .sandbox, states: [.orphaned]).isEmpty)
            #expect(try await fixture.store.channel(appID: app.id, id: otherEnvironment.id) == otherEnvironment)
            #expect(try await fixture.store.channel(appID: other.id, id: otherApp.id) == otherApp)
            #expect(try await fixture.store.channels(appID: app.id, eventID: event.id) == [active])
        }
    }

    @Test(
        "activation with an APNs ID that a live channel holds is refused, and absorbs nothing",
        arguments: Backend.allCases
    )
    func activationRefusesALiveHolder(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let holder = try await fixture.makeActiveChannel(for: try await fixture.makeEvent(for: app, key: "holder"))
            let apnsID = try #require(holder.apnsChannelID)
            let event = try await fixture.makeEvent(for: app)
            let reservation = try await fixture.reserve(event, .sandbox)
            await #expect(throws: StoreError.duplicate(entity: "channel", key: apnsID)) {
                _ = try await fixture.store.activateChannel(
                    appID: app.id,
                    id: reservation.channel.id,
                    apnsChannelID: apnsID,
                    at: fixture.now
                )
            }
            #expect(try await fixture.store.channel(appID: app.id, id: reservation.channel.id)?.state == .creating)
            #expect(try await fixture.store.channel(appID: app.id, id: holder.id) == holder)
        }
    }

    static func cursorPosition(_ channel: BroadcastChannel) -> ChannelListPosition {
        let microseconds = (channel.createdAt.timeIntervalSince1970 * 1_000_000).rounded()
        return ChannelListPosition(createdAt: Date(timeIntervalSince1970: microseconds / 1_000_000), id: channel.id)
    }
}
