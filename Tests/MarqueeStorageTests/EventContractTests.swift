import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

@Suite("Events")
struct EventContractTests {
    @Test("creating an event twice with the producer's key returns the first one", arguments: Backend.allCases)
    func idempotentCreate(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let first = try await fixture.makeEvent(for: app, key: "final-2026")
            var again = first
            again.id = EventID()
            again.title = "A different title"
            let result = try await fixture.store.createEvent(again)
            #expect(!result.created)
            #expect(result.event == first)
        }
    }

    @Test("an app sees only its own events", arguments: Backend.allCases)
    func tenantScoped(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            let event = try await fixture.makeEvent(for: app)
            #expect(try await fixture.store.event(appID: other.id, id: event.id) == nil)
            #expect(try await fixture.store.event(appID: other.id, externalKey: event.externalKey) == nil)
            #expect(
                try await !fixture.store.setEventState(
                    appID: other.id,
                    id: event.id,
                    state: .cancelled,
                    at: fixture.now
                )
            )
            #expect(try await fixture.store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now))
            #expect(try await fixture.store.event(appID: app.id, id: event.id)?.state == .live)
        }
    }

    @Test(
        "an update replaces title, environments, priority policy, times and state, not the key, type or storage policy",
        arguments: Backend.allCases
    )
    func updateEvent(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            #expect(event.priorityPolicy == nil)
            fixture.clock.advance(by: 90)
            var change = event
            change.priorityPolicy = .immediate
            change.title = "Final (extra time)"
            change.environments = [.production]
            change.plannedStart = event.plannedStart.addingTimeInterval(600)
            change.plannedEnd = event.plannedEnd.addingTimeInterval(1800)
            change.state = .live
            change.updatedAt = fixture.now
            change.externalKey = "renamed"
            change.attributesType = "OtherAttributes"
            change.storagePolicy = .mostRecentMessageStored

            let updated = try await fixture.store.updateEvent(change)
            var expected = change
            expected.externalKey = event.externalKey
            expected.attributesType = event.attributesType
            expected.storagePolicy = event.storagePolicy
            #expect(updated == expected)
            #expect(try await fixture.store.event(appID: app.id, id: event.id) == expected)
            #expect(try await fixture.store.event(appID: app.id, externalKey: "renamed") == nil)
            change.priorityPolicy = nil
            #expect(try await fixture.store.updateEvent(change).priorityPolicy == nil)
        }
    }

    @Test("an event's priority policy is stored and read back", arguments: Backend.allCases)
    func priorityPolicy(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            var event = Event(
                appID: app.id,
                externalKey: "flight-1",
                title: "BA 117",
                attributesType: "FlightAttributes",
                environments: [.sandbox],
                storagePolicy: .mostRecentMessageStored,
                priorityPolicy: .normal,
                plannedStart: fixture.now,
                plannedEnd: fixture.now.addingTimeInterval(3600),
                createdAt: fixture.now
            )
            event = try await fixture.store.createEvent(event).event
            #expect(event.priorityPolicy == .normal)
            #expect(try await fixture.store.event(appID: app.id, externalKey: "flight-1")?.priorityPolicy == .normal)
        }
    }

    @Test("another app's event cannot be updated", arguments: Backend.allCases)
    func updateScoped(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            let event = try await fixture.makeEvent(for: app)
            var hijack = event
            hijack.appID = other.id
            hijack.title = "Hijacked"
            await #expect(throws: StoreError.notFound(entity: "event", id: event.id.description)) {
                _ = try await fixture.store.updateEvent(hijack)
            }
            var missing = event
            missing.id = EventID()
            await #expect(throws: StoreError.notFound(entity: "event", id: missing.id.description)) {
                _ = try await fixture.store.updateEvent(missing)
            }
            #expect(try await fixture.store.event(appID: app.id, id: event.id) == event)
        }
    }

    @Test("events are listed in key order, page after page, filtered by state and app", arguments: Backend.allCases)
    func pagination(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            let states: [EventState] = [.scheduled, .live, .ended, .cancelled]
            // Created out of key order: the list follows keys, not insertion.
            var all: [Event] = []
            for index in [7, 2, 9, 0, 4, 1, 8, 3, 6, 5] {
                let event = try await fixture.makeEvent(for: app, key: "match-\(index)")
                let state = states[index % states.count]
                #expect(
                    try await fixture.store.setEventState(
                        appID: app.id,
                        id: event.id,
                        state: state,
                        at: event.updatedAt
                    )
                )
                all.append(try #require(try await fixture.store.event(appID: app.id, id: event.id)))
            }
            _ = try await fixture.makeEvent(for: other, key: "match-10")

            func everyPage(_ filter: Set<EventState>?, limit: Int) async throws -> (pages: Int, events: [Event]) {
                var events: [Event] = []
                var pages = 0
                var cursor: String?
                while true {
                    let page = try await fixture.store.events(
                        appID: app.id,
                        states: filter,
                        afterKey: cursor,
                        limit: limit
                    )
                    #expect(page.count <= limit)
                    if page.isEmpty { break }
                    pages += 1
                    events += page
                    cursor = page.last?.externalKey
                }
                return (pages, events)
            }

            let live = try await everyPage([.scheduled, .live], limit: 2)
            let expected = all.filter { [EventState.scheduled, .live].contains($0.state) }.sorted {
                $0.externalKey < $1.externalKey
            }
            #expect(expected.map(\.externalKey) == ["match-0", "match-1", "match-4", "match-5", "match-8", "match-9"])
            #expect(live.events == expected)
            #expect(live.pages == 3)

            let unfiltered = try await everyPage(nil, limit: 4)
            #expect(unfiltered.events.map(\.externalKey) == (0..<10).map { "match-\($0)" })
            #expect(try await fixture.store.events(appID: app.id, states: [], afterKey: nil, limit: 10).isEmpty)
            #expect(try await fixture.store.events(appID: app.id, states: nil, afterKey: "match-9", limit: 10).isEmpty)
            #expect(
                try await fixture.store.events(appID: other.id, states: nil, afterKey: nil, limit: 10).map(
                    \.externalKey
                ) == ["match-10"]
            )
        }
    }

    @Test("events are counted per state, for one app only; a state with none is left out", arguments: Backend.allCases)
    func countsByState(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            #expect(try await fixture.store.eventCounts(appID: app.id).isEmpty)
            for (index, state) in [EventState.live, .live, .ended, .scheduled].enumerated() {
                let event = try await fixture.makeEvent(for: app, key: "match-\(index)")
                #expect(
                    try await fixture.store.setEventState(
                        appID: app.id,
                        id: event.id,
                        state: state,
                        at: event.updatedAt
                    )
                )
            }
            _ = try await fixture.makeEvent(for: other, key: "match-9")
            #expect(try await fixture.store.eventCounts(appID: app.id) == [.live: 2, .ended: 1, .scheduled: 1])
            #expect(try await fixture.store.eventCounts(appID: other.id) == [.scheduled: 1])
        }
    }

    @Test(
        "deleting an event deletes its channels, activities and start ledger, and nothing of another app",
        arguments: Backend.allCases
    )
    func deleteEvent(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await DeliveryContractTests.scene(fixture)
            let app = scene.app
            let event = scene.event
            let channel = try await fixture.makeActiveChannel(for: event)
            let production = try await fixture.reserve(event, .production).channel
            let activity = Activity(
                appID: app.id,
                eventID: event.id,
                environment: .sandbox,
                channelID: channel.id,
                createdAt: fixture.now
            )
            try await fixture.store.recordActivity(activity)
            _ = try await fixture.store.recordUpdateToken(
                appID: app.id,
                id: activity.id,
                activityID: "A-1",
                token: "aa01",
                frequentPushesEnabled: false,
                at: fixture.now
            )
            try await fixture.store.commitDeliveryBatch(
                DeliveryContractTests.batch(scene, scene.tokens[0..<3], at: fixture.now),
                at: fixture.now
            )
            let rowIDs = scene.tokens.map(\.rowID)
            #expect(try await !fixture.store.startedTokens(appID: app.id, eventID: event.id, among: rowIDs).isEmpty)

            let other = try await fixture.makeApp("Other")
            let otherEvent = try await fixture.makeEvent(for: other, key: event.externalKey)
            let otherChannel = try await fixture.makeActiveChannel(for: otherEvent)
            let sibling = try await fixture.makeEvent(for: app, key: "match-2")
            let siblingChannel = try await fixture.makeActiveChannel(for: sibling)

            #expect(try await !fixture.store.deleteEvent(appID: other.id, id: event.id))
            #expect(try await fixture.store.deleteEvent(appID: app.id, id: event.id))
            #expect(try await !fixture.store.deleteEvent(appID: app.id, id: event.id))

            #expect(try await fixture.store.event(appID: app.id, id: event.id) == nil)
            #expect(try await fixture.store.channel(appID: app.id, id: channel.id) == nil)
            #expect(try await fixture.store.channel(appID: app.id, id: production.id) == nil)
            #expect(try await fixture.store.channels(appID: app.id, eventID: event.id).isEmpty)
            #expect(try await fixture.store.activity(appID: app.id, id: activity.id) == nil)
            #expect(try await fixture.store.activity(appID: app.id, activityID: "A-1") == nil)
            #expect(try await fixture.store.startedTokens(appID: app.id, eventID: event.id, among: rowIDs).isEmpty)
            // The job's deliveries (here the one token APNs refused) belong to the job and its
            // tokens, not to the event.
            #expect(
                try await fixture.store.deliveries(appID: app.id, jobID: scene.job.id).map(\.tokenRowID) == [
                    scene.tokens[1].rowID
                ]
            )

            #expect(try await fixture.store.event(appID: other.id, id: otherEvent.id) == otherEvent)
            #expect(try await fixture.store.channel(appID: other.id, id: otherChannel.id) == otherChannel)
            #expect(try await fixture.store.event(appID: app.id, id: sibling.id) == sibling)
            #expect(try await fixture.store.channels(appID: app.id, eventID: sibling.id) == [siblingChannel])
        }
    }
}
