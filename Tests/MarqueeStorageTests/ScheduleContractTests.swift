import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

/// Schedules and their jobs, events' timeline settings, and the broadcast log's part in making a
/// scheduled broadcast happen at most once: the same contract on both stores.
@Suite("Schedules")
struct ScheduleContractTests {
    func schedule(
        _ event: Event,
        _ fixture: StoreFixture,
        in seconds: TimeInterval = 60,
        kind: ScheduleKind = .broadcast,
        origin: ScheduleOrigin = .api
    )
        -> Schedule
    {
        Schedule(
            appID: event.appID,
            eventID: event.id,
            kind: kind,
            origin: origin,
            dueAt: fixture.now.addingTimeInterval(seconds),
            request: ["contentState": ["home": 1], "event": "update"],  // keys in order: stores read JSON back sorted
            createdAt: fixture.now
        )
    }

    @Test(
        "a schedule is stored with the job that wakes a worker at its time, and reads back as it was made",
        arguments: Backend.allCases
    )
    func createdWithItsJob(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let made = schedule(event, fixture)
            #expect(try await fixture.store.createSchedule(made))
            #expect(try await fixture.store.schedule(appID: app.id, id: made.id) == made)

            let job = try #require(try await fixture.store.job(appID: app.id, id: JobID(made.id.uuid)))
            #expect(job.kind == .schedule && job.state == .pending && job.dueAt == made.dueAt)
            // Not leased before its time; leased at it.
            #expect(
                try await fixture.store.leaseJobs(
                    owner: "w",
                    kinds: [.schedule],
                    now: fixture.now,
                    leaseDuration: .seconds(30),
                    limit: 5
                ).isEmpty
            )
            let leased = try await fixture.store.leaseJobs(
                owner: "w",
                kinds: [.schedule],
                now: made.dueAt,
                leaseDuration: .seconds(30),
                limit: 5
            )
            #expect(leased.map(\.id) == [job.id])

            // Another app sees nothing; an unknown event is refused.
            let other = try await fixture.makeApp("Other")
            #expect(try await fixture.store.schedule(appID: other.id, id: made.id) == nil)
            var stray = schedule(event, fixture)
            stray.appID = other.id
            await #expect(throws: StoreError.self) { try await fixture.store.createSchedule(stray) }
        }
    }

    @Test(
        "an event's timeline has one step of each kind, whatever is planned twice; a cancelled step makes room",
        arguments: Backend.allCases
    )
    func oneStepPerKind(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let first = schedule(event, fixture, kind: .start, origin: .timeline)
            #expect(try await fixture.store.createSchedule(first))
            let second = schedule(event, fixture, kind: .start, origin: .timeline)
            #expect(try await fixture.store.createSchedule(second) == false)
            #expect(try await fixture.store.job(appID: app.id, id: JobID(second.id.uuid)) == nil)
            #expect(try await fixture.store.schedule(appID: app.id, id: second.id) == nil)
            // Producers' schedules of one kind are as many as they make.
            #expect(try await fixture.store.createSchedule(schedule(event, fixture, kind: .start)))
            #expect(try await fixture.store.createSchedule(schedule(event, fixture, kind: .start)))

            _ = try await fixture.store.cancelSchedule(
                appID: app.id,
                id: first.id,
                state: .cancelled,
                outcome: nil,
                at: fixture.now
            )
            #expect(try await fixture.store.createSchedule(second))
            #expect(try await fixture.store.timelineSteps(appID: app.id, eventID: event.id).map(\.id) == [second.id])
        }
    }

    @Test(
        "a schedule moves forward only: begun when due, begun again after a worker stopped, finished once",
        arguments: Backend.allCases
    )
    func transitions(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let made = schedule(event, fixture)
            _ = try await fixture.store.createSchedule(made)
            let store = fixture.store

            // Not due: left pending.
            #expect(try await store.beginSchedule(appID: app.id, id: made.id, now: fixture.now)?.state == .pending)
            let begun = try #require(try await store.beginSchedule(appID: app.id, id: made.id, now: made.dueAt))
            #expect(begun.state == .running && begun.attempts == 1)
            // A running schedule cannot be cancelled or moved; a second worker may begin it again.
            #expect(
                try await store.cancelSchedule(
                    appID: app.id,
                    id: made.id,
                    state: .cancelled,
                    outcome: nil,
                    at: fixture.now
                )?.changed == false
            )
            #expect(try await store.moveSchedule(appID: app.id, id: made.id, to: fixture.now, at: fixture.now) == false)
            #expect(try await store.beginSchedule(appID: app.id, id: made.id, now: made.dueAt)?.attempts == 2)

            let performedAt = made.dueAt.addingTimeInterval(1)
            let outcome: JSONValue = ["startJobs": ["a"]]
            #expect(
                try await store.finishSchedule(
                    appID: app.id,
                    id: made.id,
                    state: .succeeded,
                    outcome: outcome,
                    error: nil,
                    at: performedAt
                )
            )
            #expect(
                try await store.finishSchedule(
                    appID: app.id,
                    id: made.id,
                    state: .failed,
                    outcome: nil,
                    error: "late",
                    at: performedAt
                ) == false
            )
            let finished = try #require(try await store.schedule(appID: app.id, id: made.id))
            #expect(
                finished.state == .succeeded && finished.outcome == outcome && finished.performedAt == performedAt
                    && finished.lastError == nil
            )
            // Finished is final: beginning answers it unchanged.
            #expect(try await store.beginSchedule(appID: app.id, id: made.id, now: performedAt) == finished)
        }
    }

    @Test(
        "cancelling a pending schedule cancels its job; skipping keeps why; moving moves its job",
        arguments: Backend.allCases
    )
    func cancelSkipMove(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let store = fixture.store
            let cancelled = schedule(event, fixture)
            let skipped = schedule(event, fixture)
            let moved = schedule(event, fixture)
            for made in [cancelled, skipped, moved] { _ = try await store.createSchedule(made) }

            let first = try #require(
                try await store.cancelSchedule(
                    appID: app.id,
                    id: cancelled.id,
                    state: .cancelled,
                    outcome: nil,
                    at: fixture.now
                )
            )
            #expect(first.changed && first.schedule.state == .cancelled)
            #expect(try await store.job(appID: app.id, id: JobID(cancelled.id.uuid))?.state == .cancelled)
            let again = try #require(
                try await store.cancelSchedule(
                    appID: app.id,
                    id: cancelled.id,
                    state: .cancelled,
                    outcome: nil,
                    at: fixture.now
                )
            )
            #expect(!again.changed && again.schedule.state == .cancelled)

            let why: JSONValue = ["skipped": "an end was already sent"]
            let skip = try await store.cancelSchedule(
                appID: app.id,
                id: skipped.id,
                state: .skipped,
                outcome: why,
                at: fixture.now
            )
            #expect(skip?.schedule.state == .skipped && skip?.schedule.outcome == why)

            let later = fixture.now.addingTimeInterval(7200)
            #expect(try await store.moveSchedule(appID: app.id, id: moved.id, to: later, at: fixture.now))
            #expect(try await store.schedule(appID: app.id, id: moved.id)?.dueAt == later)
            #expect(try await store.job(appID: app.id, id: JobID(moved.id.uuid))?.dueAt == later)

            // Only the moved one is left to lease, and only at its new time.
            let dueBefore = try await store.leaseJobs(
                owner: "w",
                kinds: [.schedule],
                now: later.addingTimeInterval(-1),
                leaseDuration: .seconds(30),
                limit: 5
            )
            #expect(dueBefore.isEmpty)
            let dueAt = try await store.leaseJobs(
                owner: "w",
                kinds: [.schedule],
                now: later,
                leaseDuration: .seconds(30),
                limit: 5
            )
            #expect(dueAt.map(\.id) == [JobID(moved.id.uuid)])
            #expect(
                try await store.cancelSchedule(
                    appID: app.id,
                    id: ScheduleID(),
                    state: .cancelled,
                    outcome: nil,
                    at: fixture.now
                ) == nil
            )
        }
    }

    @Test(
        "closing an event cancels its pending schedules (with their jobs), not those that began",
        arguments: Backend.allCases
    )
    func cancelAllOfEvent(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let other = try await fixture.makeEvent(for: app, key: "match-2")
            let store = fixture.store
            let pending = [schedule(event, fixture), schedule(event, fixture, kind: .end, origin: .timeline)]
            let running = schedule(event, fixture, in: 0)
            let elsewhere = schedule(other, fixture)
            for made in pending + [running, elsewhere] { _ = try await store.createSchedule(made) }
            _ = try await store.beginSchedule(appID: app.id, id: running.id, now: fixture.now)

            #expect(try await store.cancelSchedules(appID: app.id, eventID: event.id, at: fixture.now) == 2)
            for made in pending {
                #expect(try await store.schedule(appID: app.id, id: made.id)?.state == .cancelled)
                #expect(try await store.job(appID: app.id, id: JobID(made.id.uuid))?.state == .cancelled)
            }
            #expect(try await store.schedule(appID: app.id, id: running.id)?.state == .running)
            #expect(try await store.schedule(appID: app.id, id: elsewhere.id)?.state == .pending)
        }
    }

    @Test("an event's schedules page by due time", arguments: Backend.allCases)
    func pages(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            var made: [Schedule] = []
            for minutes in [30, 10, 20, 10, 40] {
                let one = schedule(event, fixture, in: Double(minutes * 60))
                _ = try await fixture.store.createSchedule(one)
                made.append(one)
            }
            let expected = made.sorted {
                ($0.dueAt, $0.id.uuid.uuidString.lowercased()) < ($1.dueAt, $1.id.uuid.uuidString.lowercased())
            }
            var seen: [Schedule] = []
            var after: ScheduleListPosition?
            while true {
                let page = try await fixture.store.schedules(appID: app.id, eventID: event.id, after: after, limit: 2)
                seen += page
                guard page.count == 2, let last = page.last else { break }
                after = ScheduleListPosition(dueAt: last.dueAt, id: last.id)
            }
            #expect(seen.map(\.dueAt) == expected.map(\.dueAt))
            #expect(Set(seen.map(\.id)) == Set(made.map(\.id)))
            #expect(seen.count == 5)
        }
    }

    @Test("an event keeps its timeline settings", arguments: Backend.allCases)
    func timelineSettings(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            var event = try await fixture.makeEvent(for: app)
            #expect(event.timeline == nil)
            let settings = EventTimelineSettings(
                automatic: true,
                start: TimelineStart(
                    environment: .sandbox,
                    attributes: ["homeTeam": "Arsenal"],
                    contentState: ["away": 0, "home": 0],
                    alert: ["body": "Arsenal v Chelsea", "title": "Kick-off"],
                    tags: ["arsenal"]
                ),
                channelLeadSeconds: 1800,
                endAfterSeconds: 7200
            )
            event.timeline = settings
            #expect(try await fixture.store.updateEvent(event).timeline == settings)
            #expect(try await fixture.store.event(appID: app.id, id: event.id)?.timeline == settings)

            var created = Event(
                appID: app.id,
                externalKey: "with-timeline",
                title: "Final",
                attributesType: "MatchAttributes",
                environments: [.sandbox],
                storagePolicy: .mostRecentMessageStored,
                plannedStart: fixture.now,
                plannedEnd: fixture.now.addingTimeInterval(3600),
                timeline: EventTimelineSettings(automatic: false),
                createdAt: fixture.now
            )
            created = try await fixture.store.createEvent(created).event
            #expect(created.timeline == EventTimelineSettings(automatic: false))
        }
    }

    @Test(
        """
        a scheduled broadcast is logged once per channel before it is sent; the log tells the timeline the first \
        end and the last state
        """,
        arguments: Backend.allCases
    )
    func scheduledBroadcastLog(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let channel = try await fixture.makeActiveChannel(for: event)
            let store = fixture.store
            let scheduleID = ScheduleID()
            func entry(
                _ state: JSONObject,
                event kind: BroadcastEvent = .update,
                status: Int = 0,
                schedule: ScheduleID? = scheduleID,
                at offset: TimeInterval = 0
            )
                -> BroadcastLogEntry
            {
                BroadcastLogEntry(
                    appID: app.id,
                    channelID: channel.id,
                    apnsRequestID: UUID(),
                    apnsUniqueID: nil,
                    priority: .normal,
                    timestamp: 1,
                    status: status,
                    reason: nil,
                    latency: .zero,
                    sentAt: fixture.now.addingTimeInterval(offset),
                    event: kind,
                    contentState: state,
                    scheduleID: schedule
                )
            }
            #expect(try await store.broadcastSummary(appID: app.id, eventID: event.id) == EventBroadcastSummary())

            let first = try await store.appendScheduledBroadcastLog(entry(["home": 1]))
            #expect(first.appended)
            let sequence = try #require(first.entry.sequence)
            // A second run of the same schedule finds the first one's row: nothing to send.
            let second = try await store.appendScheduledBroadcastLog(entry(["home": 9]))
            #expect(!second.appended && second.entry.sequence == sequence && second.entry.status == 0)
            #expect(second.entry.scheduleID == scheduleID && second.entry.contentState == ["home": 1])

            try await store.completeBroadcastLog(
                appID: app.id,
                sequence: sequence,
                status: 200,
                reason: nil,
                apnsUniqueID: "u-1",
                latency: .milliseconds(3)
            )
            let logged = try #require(
                try await store.broadcastLog(appID: app.id, channelID: channel.id, limit: 10).first
            )
            #expect(logged.status == 200 && logged.apnsUniqueID == "u-1" && logged.latencyMicroseconds == 3000)

            // The newest accepted content-state, and the first accepted end, whoever sent them.
            try await store.appendBroadcastLog(entry(["home": 2], status: 200, schedule: nil, at: 10))
            try await store.appendBroadcastLog(entry(["home": 3], event: .end, status: 500, schedule: nil, at: 20))
            try await store.appendBroadcastLog(entry(["home": 4], event: .end, status: 200, schedule: nil, at: 30))
            try await store.appendBroadcastLog(entry(["home": 5], event: .end, status: 200, schedule: nil, at: 40))
            let summary = try await store.broadcastSummary(appID: app.id, eventID: event.id)
            #expect(summary.firstEndAt == fixture.now.addingTimeInterval(30))
            #expect(summary.lastContentState == ["home": 5])
        }
    }
}
