import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

/// One device through token rotation, its app's device token, what it reports, and the funnel: a
/// registration naming a known device ID under a new token moves the device's row (same row ID, so
/// the start ledger, reports and pending starts follow the device); a new token that had a row of
/// its own is merged into the device's; a batch that read the merged row before the merge writes its
/// starts to the device's row after it.
@Suite("Devices and presence")
struct DeviceContractTests {
    static let deviceToken = String(repeating: "ab", count: 32)

    static func token(_ index: Int) -> String { String(format: "%064x", index) }

    static func lookup(_ fixture: StoreFixture, _ app: App, _ index: Int) async throws -> PushToStartToken? {
        try await fixture.store.pushToStartToken(
            appID: app.id,
            environment: .sandbox,
            attributesType: "MatchAttributes",
            token: token(index)
        )
    }

    /// A registration of `token(tokenIndex)` for the device `device-<deviceIndex>` (no device ID: `nil`).
    static func registration(
        token tokenIndex: Int,
        device deviceIndex: Int?,
        deviceToken: String? = nil,
        tags: [String] = []
    ) -> PushToStartRegistration {
        PushToStartRegistration(
            environment: .sandbox,
            attributesType: "MatchAttributes",
            token: token(tokenIndex),
            deviceID: deviceIndex.map { "device-\($0)" },
            tags: tags,
            deviceToken: deviceToken
        )
    }

    /// A start job of the event (the job the API shows, `total` devices, and one part with its
    /// arguments) leased by "worker": the part is what batches commit to.
    static func startJob(
        _ fixture: StoreFixture,
        _ event: Event,
        total: Int64,
        extra: JSONObject = [:]
    ) async throws -> Job {
        var arguments: JSONObject = ["eventID": .string(event.id.description), "environment": "sandbox"]
        for (key, value) in extra.pairs { arguments[key] = value }
        let parent = Job(
            appID: event.appID,
            kind: .startFanOut,
            arguments: .object(arguments),
            dueAt: fixture.now,
            progress: JobProgress(total: total),
            createdAt: fixture.now
        )
        let part = Job(
            appID: event.appID,
            kind: .startFanOutPartition,
            parentID: parent.id,
            arguments: .object(arguments),
            dueAt: fixture.now,
            createdAt: fixture.now
        )
        try await fixture.store.enqueueJobs([parent, part])
        let leased = try await fixture.store.leaseJobs(
            owner: "worker",
            kinds: [.startFanOutPartition],
            now: fixture.now,
            leaseDuration: .seconds(600),
            limit: 10
        )
        #expect(leased.contains { $0.id == part.id })
        return part
    }

    static func batch(
        _ part: Job,
        _ event: Event,
        _ outcomes: [(Int64, DeliveryOutcome, APNSErrorReason?)],
        at: Date
    ) -> DeliveryBatch {
        DeliveryBatch(
            appID: event.appID,
            jobID: part.id,
            leaseOwner: "worker",
            deliveries: outcomes.map { row, outcome, reason in
                Delivery(jobID: part.id, tokenRowID: row, outcome: outcome, reason: reason, sentAt: at, completedAt: at)
            },
            startedEventID: event.id,
            progress: JobProgress(attempted: Int64(outcomes.count)),
            checkpoint: nil
        )
    }

    /// Commits accepted starts of the event for `rows` under a job of their own; returns the part.
    @discardableResult
    static func start(_ fixture: StoreFixture, _ event: Event, _ rows: [Int64]) async throws -> Job {
        let part = try await startJob(fixture, event, total: Int64(rows.count))
        try await fixture.store.commitDeliveryBatch(
            batch(part, event, rows.map { ($0, .accepted, nil) }, at: fixture.now),
            at: fixture.now
        )
        return part
    }

    static func showing(_ activity: String = "activity-1") -> PresenceReport {
        PresenceReport(environment: .sandbox, state: .showing, activityID: activity)
    }

    @Test(
        """
        a rotated token moves the device's row: same row ID, its starts, reports and device token follow; a late \
        410 for the old token retires nothing
        """,
        arguments: Backend.allCases
    )
    func rotation(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                [Self.registration(token: 1, device: 1, deviceToken: Self.deviceToken)],
                at: fixture.now
            )
            let device = try #require(try await Self.lookup(fixture, app, 1))
            #expect(device.deviceToken == Self.deviceToken)
            try await Self.start(fixture, event, [device.rowID])
            _ = try await store.recordPresence(
                appID: app.id,
                eventID: event.id,
                tokenRowID: device.rowID,
                Self.showing(),
                bound: nil,
                at: fixture.now
            )
            let sentAt = fixture.now

            // ActivityKit rotates the token; the app registers the new one without its device token.
            fixture.clock.advance(by: 30)
            #expect(
                try await store.upsertPushToStartTokens(
                    appID: app.id,
                    [Self.registration(token: 2, device: 1)],
                    at: fixture.now
                ) == 1
            )
            #expect(try await Self.lookup(fixture, app, 1) == nil)
            let rotated = try #require(try await Self.lookup(fixture, app, 2))
            #expect(rotated.rowID == device.rowID)
            #expect(rotated.deviceID == "device-1")
            #expect(rotated.deviceToken == Self.deviceToken)
            #expect(rotated.firstRegisteredAt == device.firstRegisteredAt)
            #expect(rotated.lastRegisteredAt == fixture.now)
            #expect(
                try await store.startStanding(appID: app.id, eventID: event.id, tokenRowID: rotated.rowID)
                    == DeviceStartStanding(started: true, uncertain: false)
            )
            #expect(
                try await store.presence(appID: app.id, eventID: event.id, tokenRowID: rotated.rowID)?.state == .showing
            )
            #expect(
                try await store.deviceTokens(appID: app.id, tokenRowIDs: [rotated.rowID, 999_999]) == [
                    rotated.rowID: Self.deviceToken
                ]
            )
            // A late joiner it is not: the ledger holds the device.
            try await store.recordLateJoinOffer(PendingStartContractTests.offer(event, at: fixture.now))
            _ = try await store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now)
            #expect(
                try await store.enqueueLateJoiners(
                    appID: app.id,
                    PendingStartContractTests.keys(2..<3),
                    at: fixture.now
                ) == 0
            )

            // APNs' 410 for the old token, dated after the rotation, names the old token: the row is
            // the new token's now and is not retired. One for the new token dated before the
            // rotation is stale; one after it retires the row.
            let ms = { (date: Date) in Int64(date.timeIntervalSince1970 * 1000) }
            let lateForOld = TokenInvalidation(
                reason: .unregistered,
                apnsTimestampMilliseconds: ms(fixture.now) + 5_000,
                token: Self.token(1)
            )
            #expect(try await !store.invalidatePushToStartToken(appID: app.id, rowID: rotated.rowID, lateForOld))
            let staleForNew = TokenInvalidation(
                reason: .unregistered,
                apnsTimestampMilliseconds: ms(sentAt),
                token: Self.token(2)
            )
            #expect(try await !store.invalidatePushToStartToken(appID: app.id, rowID: rotated.rowID, staleForNew))
            #expect(try await Self.lookup(fixture, app, 2)?.isValid == true)
            let freshForNew = TokenInvalidation(
                reason: .unregistered,
                apnsTimestampMilliseconds: ms(fixture.now) + 5_000,
                token: Self.token(2)
            )
            #expect(try await store.invalidatePushToStartToken(appID: app.id, rowID: rotated.rowID, freshForNew))

            // A device token sent later replaces the kept one; a registration without a device ID
            // is a token of its own, whatever other rows say.
            fixture.clock.advance(by: 30)
            let newer = String(repeating: "cd", count: 32)
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                [Self.registration(token: 2, device: 1, deviceToken: newer), Self.registration(token: 3, device: nil)],
                at: fixture.now
            )
            #expect(try await Self.lookup(fixture, app, 2)?.deviceToken == newer)
            #expect(try await Self.lookup(fixture, app, 2)?.isValid == true)
            let plain = try #require(try await Self.lookup(fixture, app, 3))
            #expect(plain.rowID != device.rowID && plain.deviceID == nil && plain.deviceToken == nil)
            // Another device's ID on its own token is another row; a batch naming one device twice
            // keeps its last registration.
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                [
                    Self.registration(token: 4, device: 2), Self.registration(token: 5, device: 1),
                    Self.registration(token: 6, device: 1),
                ],
                at: fixture.now
            )
            #expect(try await Self.lookup(fixture, app, 4)?.rowID != device.rowID)
            #expect(try await Self.lookup(fixture, app, 5) == nil)
            #expect(try await Self.lookup(fixture, app, 6)?.rowID == device.rowID)
        }
    }

    @Test(
        """
        a new token that had a row of its own is merged into the device's: what the device's row lacks moves, \
        then the row goes
        """,
        arguments: Backend.allCases
    )
    func merge(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let both = try await fixture.makeEvent(for: app, key: "both")
            let tokenOnly = try await fixture.makeEvent(for: app, key: "token-only")
            let pending = try await fixture.makeEvent(for: app, key: "pending")
            let pendingBoth = try await fixture.makeEvent(for: app, key: "pending-both")
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                [Self.registration(token: 1, device: 1), Self.registration(token: 2, device: nil, tags: ["late"])],
                at: fixture.now
            )
            let device = try #require(try await Self.lookup(fixture, app, 1)).rowID
            let tokenRow = try #require(try await Self.lookup(fixture, app, 2)).rowID
            let devicesStart = try await Self.start(fixture, both, [device])
            try await Self.start(fixture, both, [tokenRow])
            let tokensStart = try await Self.start(fixture, tokenOnly, [tokenRow])
            _ = try await store.recordPresence(
                appID: app.id,
                eventID: both.id,
                tokenRowID: device,
                Self.showing("mine"),
                bound: nil,
                at: fixture.now
            )
            _ = try await store.recordPresence(
                appID: app.id,
                eventID: both.id,
                tokenRowID: tokenRow,
                Self.showing("theirs"),
                bound: nil,
                at: fixture.now
            )
            _ = try await store.recordPresence(
                appID: app.id,
                eventID: tokenOnly.id,
                tokenRowID: tokenRow,
                Self.showing("moved"),
                bound: nil,
                at: fixture.now
            )
            // Late joiners waiting: the token's row for two live events, the device's for one of them.
            // (`pending` reaches the tag only the token's row has.)
            try await store.recordLateJoinOffer(
                PendingStartContractTests.offer(pending, tags: ["late"], at: fixture.now)
            )
            try await store.recordLateJoinOffer(PendingStartContractTests.offer(pendingBoth, at: fixture.now))
            for event in [pending, pendingBoth] {
                _ = try await store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now)
            }
            #expect(
                try await store.enqueueLateJoiners(
                    appID: app.id,
                    PendingStartContractTests.keys(1..<3),
                    at: fixture.now
                ) == 3
            )
            // A pump holds them all; the merged row's claim is dropped with the move.
            let claimed = try await store.claimPendingStarts(
                owner: "pump",
                now: fixture.now,
                until: fixture.now.addingTimeInterval(60),
                limit: 10
            )
            #expect(claimed.count == 3)

            fixture.clock.advance(by: 30)
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                [Self.registration(token: 2, device: 1)],
                at: fixture.now
            )
            #expect(try await Self.lookup(fixture, app, 1) == nil)
            #expect(try await Self.lookup(fixture, app, 2)?.rowID == device)
            #expect(
                try await store.audiencePage(
                    AudienceQuery(appID: app.id, environment: .sandbox, attributesType: "MatchAttributes"),
                    after: 0,
                    limit: 10
                ).map(\.rowID) == [device]
            )

            // Both rows started for `both`: the device's entry is kept (it is what the device was sent).
            #expect(
                try await store.startRecords(appID: app.id, eventID: both.id, among: [device, tokenRow]).map(\.jobID)
                    == [devicesStart.id]
            )
            #expect(
                try await store.startRecords(appID: app.id, eventID: tokenOnly.id, among: [device, tokenRow]).map(
                    \.jobID
                ) == [tokensStart.id]
            )
            #expect(try await store.startRecords(appID: app.id, eventID: tokenOnly.id, among: [device]).count == 1)
            #expect(try await store.presence(appID: app.id, eventID: both.id, tokenRowID: device)?.activityID == "mine")
            #expect(
                try await store.presence(appID: app.id, eventID: tokenOnly.id, tokenRowID: device)?.activityID
                    == "moved"
            )
            #expect(try await store.presence(appID: app.id, eventID: tokenOnly.id, tokenRowID: tokenRow) == nil)
            // One pending start per event for the device: neither lost nor doubled, and claimable again.
            #expect(try await store.pendingStartCount(appID: app.id, eventID: pending.id, environment: .sandbox) == 1)
            #expect(
                try await store.pendingStartCount(appID: app.id, eventID: pendingBoth.id, environment: .sandbox) == 1
            )
            let reclaimed = try await store.claimPendingStarts(
                owner: "pump-2",
                now: fixture.now,
                until: fixture.now.addingTimeInterval(60),
                limit: 10
            )
            #expect(reclaimed.map(\.eventID) == [pending.id])
            #expect(reclaimed.map(\.tokenRowID) == [device])
            #expect(reclaimed.map(\.token) == [Self.token(2)])
        }
    }

    @Test(
        "a batch that read the merged row before the merge writes its start to the device's row after it",
        arguments: Backend.allCases
    )
    func batchAfterMerge(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let other = try await fixture.makeEvent(for: app, key: "other")
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                [
                    Self.registration(token: 1, device: 1), Self.registration(token: 2, device: nil),
                    Self.registration(token: 3, device: nil),
                ],
                at: fixture.now
            )
            let device = try #require(try await Self.lookup(fixture, app, 1)).rowID
            let tokenRow = try #require(try await Self.lookup(fixture, app, 2)).rowID
            let laterRow = try #require(try await Self.lookup(fixture, app, 3)).rowID
            // A fan-out read the token's row and sent it; the device rotates to that token (merge),
            // and then again to another token that had a row (a second merge): the first merged
            // row points at the device's row still.
            let part = try await Self.startJob(fixture, event, total: 1)
            let otherPart = try await Self.start(fixture, other, [device])
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                [Self.registration(token: 2, device: 1)],
                at: fixture.now
            )
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                [Self.registration(token: 3, device: 1)],
                at: fixture.now
            )
            #expect(try await Self.lookup(fixture, app, 3)?.rowID == device)

            try await store.commitDeliveryBatch(
                Self.batch(part, event, [(tokenRow, .accepted, nil), (laterRow, .accepted, nil)], at: fixture.now),
                at: fixture.now
            )
            #expect(try await store.startStanding(appID: app.id, eventID: event.id, tokenRowID: device).started)
            #expect(
                try await store.startRecords(appID: app.id, eventID: event.id, among: [device, tokenRow, laterRow]).map(
                    \.tokenRowID
                ) == [device]
            )
            let query = AudienceQuery(
                appID: app.id,
                environment: .sandbox,
                attributesType: "MatchAttributes",
                excludingStartsOf: event.id
            )
            #expect(try await store.audiencePage(query, after: 0, limit: 10).isEmpty)

            // Where the device's row has its own start for the event, that one is kept.
            let late = try await Self.startJob(fixture, other, total: 1)
            try await store.commitDeliveryBatch(
                Self.batch(late, other, [(tokenRow, .accepted, nil)], at: fixture.now),
                at: fixture.now
            )
            #expect(
                try await store.startRecords(appID: app.id, eventID: other.id, among: [device, tokenRow]).map(\.jobID)
                    == [otherPart.id]
            )
        }
    }

    @Test(
        "a report replaces the device's last one, is the app's only, and is bounded per window",
        arguments: Backend.allCases
    )
    func presence(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                [Self.registration(token: 1, device: 1)],
                at: fixture.now
            )
            let row = try #require(try await Self.lookup(fixture, app, 1)).rowID
            let bound = PresenceRateBound(maximumReports: 3)
            let first = fixture.now

            let absent = PresenceReport(environment: .sandbox, state: .absent)
            guard
                case .recorded(let recorded) = try await store.recordPresence(
                    appID: app.id,
                    eventID: event.id,
                    tokenRowID: row,
                    absent,
                    bound: bound,
                    at: fixture.now
                )
            else {
                Issue.record("the first report is recorded")
                return
            }
            #expect(recorded.state == .absent && recorded.activityID == nil && recorded.firstReportedAt == first)
            fixture.clock.advance(by: 10)
            // The same report again changes only its time.
            guard
                case .recorded(let again) = try await store.recordPresence(
                    appID: app.id,
                    eventID: event.id,
                    tokenRowID: row,
                    absent,
                    bound: bound,
                    at: fixture.now
                )
            else {
                Issue.record("the same report again is recorded")
                return
            }
            #expect(again.state == .absent && again.firstReportedAt == first && again.reportedAt == fixture.now)
            fixture.clock.advance(by: 10)
            guard
                case .recorded(let replaced) = try await store.recordPresence(
                    appID: app.id,
                    eventID: event.id,
                    tokenRowID: row,
                    Self.showing(),
                    bound: bound,
                    at: fixture.now
                )
            else {
                Issue.record("a third report is within the bound")
                return
            }
            #expect(
                replaced.state == .showing && replaced.activityID == "activity-1" && replaced.firstReportedAt == first
            )
            // The fourth within the minute is refused with the window's start, and changes nothing.
            fixture.clock.advance(by: 10)
            let ended = PresenceReport(environment: .sandbox, state: .ended, activityID: "activity-1")
            #expect(
                try await store.recordPresence(
                    appID: app.id,
                    eventID: event.id,
                    tokenRowID: row,
                    ended,
                    bound: bound,
                    at: fixture.now
                ) == .limited(windowStartedAt: first)
            )
            #expect(bound.retryAfterSeconds(windowStartedAt: first, now: fixture.now) == 30)
            #expect(try await store.presence(appID: app.id, eventID: event.id, tokenRowID: row)?.state == .showing)
            // Marquee's own inference (no bound) is never refused and leaves the window as it is.
            #expect(
                try await store.recordPresence(
                    appID: app.id,
                    eventID: event.id,
                    tokenRowID: row,
                    Self.showing(),
                    bound: nil,
                    at: fixture.now
                ) != .limited(windowStartedAt: first)
            )
            // A new window once the last one is over.
            fixture.clock.advance(by: 31)
            guard
                case .recorded(let next) = try await store.recordPresence(
                    appID: app.id,
                    eventID: event.id,
                    tokenRowID: row,
                    ended,
                    bound: bound,
                    at: fixture.now
                )
            else {
                Issue.record("a report in the next window is recorded")
                return
            }
            #expect(next.state == .ended)

            // Another app's event or token row: nothing is recorded.
            let stranger = try await fixture.makeApp("Other")
            await #expect(throws: StoreError.self) {
                _ = try await store.recordPresence(
                    appID: stranger.id,
                    eventID: event.id,
                    tokenRowID: row,
                    absent,
                    bound: bound,
                    at: fixture.now
                )
            }
            #expect(try await store.presence(appID: stranger.id, eventID: event.id, tokenRowID: row) == nil)
        }
    }

    @Test(
        "the funnel counts each device once per stage, by environment, late joiners and absent-then-started included",
        arguments: Backend.allCases
    )
    func funnel(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                (0..<8).map { Self.registration(token: $0, device: $0) },
                at: fixture.now
            )
            var rows: [Int64] = []
            for index in 0..<8 { rows.append(try #require(try await Self.lookup(fixture, app, index)).rowID) }
            #expect(try await store.deliveryFunnels(appID: app.id, eventID: event.id).isEmpty)

            // The kick-off's start: 0–2 accepted, 3 and 4 rejected, 5 uncertain, 6 failed; 7 registers later.
            let kickOff = try await Self.startJob(fixture, event, total: 7)
            try await store.commitDeliveryBatch(
                Self.batch(
                    kickOff,
                    event,
                    [
                        (rows[0], .accepted, nil), (rows[1], .accepted, nil), (rows[2], .accepted, nil),
                        (rows[3], .rejected, .badDeviceToken), (rows[4], .tokenInvalid, .unregistered),
                        (rows[5], .uncertain, nil), (rows[6], .failed, .tooManyRequests),
                    ],
                    at: fixture.now
                ),
                at: fixture.now
            )
            #expect(
                try await store.startStanding(appID: app.id, eventID: event.id, tokenRowID: rows[5])
                    == DeviceStartStanding(started: false, uncertain: true)
            )
            #expect(
                try await store.startStanding(appID: app.id, eventID: event.id, tokenRowID: rows[3])
                    == DeviceStartStanding(started: false, uncertain: false)
            )
            // Device 7 joins late; device 6 reports absent and is started for it; 0 shows, 1 ended, 2 dismissed.
            let lateJoin = try await Self.startJob(fixture, event, total: 1, extra: ["lateJoin": true])
            try await store.commitDeliveryBatch(
                Self.batch(lateJoin, event, [(rows[7], .accepted, nil)], at: fixture.now),
                at: fixture.now
            )
            let afterAbsent = try await Self.startJob(fixture, event, total: 1, extra: ["reason": "absent"])
            try await store.commitDeliveryBatch(
                Self.batch(afterAbsent, event, [(rows[6], .accepted, nil)], at: fixture.now),
                at: fixture.now
            )
            _ = try await store.recordPresence(
                appID: app.id,
                eventID: event.id,
                tokenRowID: rows[0],
                Self.showing(),
                bound: nil,
                at: fixture.now
            )
            _ = try await store.recordPresence(
                appID: app.id,
                eventID: event.id,
                tokenRowID: rows[1],
                PresenceReport(environment: .sandbox, state: .ended),
                bound: nil,
                at: fixture.now
            )
            _ = try await store.recordPresence(
                appID: app.id,
                eventID: event.id,
                tokenRowID: rows[2],
                PresenceReport(environment: .sandbox, state: .dismissed),
                bound: nil,
                at: fixture.now
            )
            _ = try await store.recordPresence(
                appID: app.id,
                eventID: event.id,
                tokenRowID: rows[5],
                PresenceReport(environment: .sandbox, state: .absent),
                bound: nil,
                at: fixture.now
            )
            // A device that rotates keeps its counts.
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                [Self.registration(token: 100, device: 0)],
                at: fixture.now
            )

            let funnels = try await store.deliveryFunnels(appID: app.id, eventID: event.id)
            #expect(funnels.map(\.environment) == [.sandbox])
            let funnel = try #require(funnels.first)
            #expect(
                funnel.counts == [
                    .targeted: 8, .sent: 8, .accepted: 5, .rejected: 2, .uncertain: 1, .showing: 1, .ended: 2,
                    .absent: 1,
                    .lateJoinersStarted: 1, .absentThenStarted: 1,
                ]
            )
            #expect(funnel.rejectedByReason == ["BadDeviceToken": 1, "Unregistered": 1])
            // Another app sees nothing of it.
            let stranger = try await fixture.makeApp("Other")
            #expect(try await store.deliveryFunnels(appID: stranger.id, eventID: event.id).isEmpty)
        }
    }
}
