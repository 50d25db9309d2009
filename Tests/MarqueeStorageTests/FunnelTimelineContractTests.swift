import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

/// The delivery funnel over time: each device counted in a stage from the moment it entered it, in
/// buckets from the event's first send; the last bucket equals the funnel's totals.
@Suite("Delivery funnel over time")
struct FunnelTimelineContractTests {
    typealias Devices = DeviceContractTests

    @Test(
        "each stage counts a device from when it entered it, the last point is the funnel, the width follows the span",
        arguments: Backend.allCases
    )
    func timeline(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            _ = try await store.upsertPushToStartTokens(
                appID: app.id,
                (0..<6).map { Devices.registration(token: $0, device: $0) },
                at: fixture.now
            )
            var rows: [Int64] = []
            for index in 0..<6 { rows.append(try #require(try await Devices.lookup(fixture, app, index)).rowID) }
            // Nothing sent yet: no buckets.
            let before = try await store.deliveryFunnelTimeline(appID: app.id, eventID: event.id, until: fixture.now)
            #expect(before.buckets == nil && before.series.isEmpty)

            // At 0 s the kick-off: 0–2 accepted, 3 rejected, 4 uncertain.
            let origin = fixture.now
            let kickOff = try await Devices.startJob(fixture, event, total: 5)
            try await store.commitDeliveryBatch(
                Devices.batch(
                    kickOff,
                    event,
                    [
                        (rows[0], .accepted, nil), (rows[1], .accepted, nil), (rows[2], .accepted, nil),
                        (rows[3], .rejected, .badDeviceToken), (rows[4], .uncertain, nil),
                    ],
                    at: fixture.now
                ),
                at: fixture.now
            )
            // At 30 s devices 0 and 1 show it; at 60 s device 1 ended it and device 0 says showing again
            // (which does not move when it began showing); at 90 s device 5 joins late.
            fixture.clock.advance(by: 30)
            for row in rows[0...1] {
                _ = try await store.recordPresence(
                    appID: app.id,
                    eventID: event.id,
                    tokenRowID: row,
                    Devices.showing(),
                    bound: nil,
                    at: fixture.now
                )
            }
            fixture.clock.advance(by: 30)
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
                tokenRowID: rows[0],
                Devices.showing(),
                bound: nil,
                at: fixture.now
            )
            fixture.clock.advance(by: 30)
            let lateJoin = try await Devices.startJob(fixture, event, total: 1, extra: ["lateJoin": true])
            try await store.commitDeliveryBatch(
                Devices.batch(lateJoin, event, [(rows[5], .accepted, nil)], at: fixture.now),
                at: fixture.now
            )

            // Two minutes in: 1 s buckets, 121 of them, the last ending at the time asked for.
            let until = origin.addingTimeInterval(120)
            let timeline = try await store.deliveryFunnelTimeline(appID: app.id, eventID: event.id, until: until)
            let buckets = try #require(timeline.buckets)
            #expect(buckets.origin == origin && buckets.until == until)
            #expect(buckets.stepMicroseconds == 1_000_000 && buckets.count == 121)
            #expect(buckets.end(of: 0) == origin.addingTimeInterval(1) && buckets.end(of: 120) == until)
            #expect(timeline.series.map(\.environment) == [.sandbox])
            let series = try #require(timeline.series.first)
            let at = { (stage: FunnelStage, index: Int) in series.counts(of: stage, bucketCount: buckets.count)[index] }
            #expect([at(.sent, 0), at(.sent, 89), at(.sent, 90), at(.sent, 120)] == [5, 5, 6, 6])
            #expect([at(.accepted, 0), at(.accepted, 89), at(.accepted, 90)] == [3, 3, 4])
            // Device 1 ended: it counts as ended from 60 s and never as showing (its last state).
            #expect([at(.showing, 29), at(.showing, 30), at(.showing, 120)] == [0, 1, 1])
            #expect([at(.ended, 59), at(.ended, 60)] == [0, 1])
            #expect([at(.lateJoinersStarted, 89), at(.lateJoinersStarted, 90)] == [0, 1])
            // The rule: the last point of each stage is the funnel's total for it.
            let funnel = try #require(try await store.deliveryFunnels(appID: app.id, eventID: event.id).first)
            for stage in DeliveryFunnelTimeline.stages {
                #expect(at(stage, buckets.count - 1) == funnel[stage], "\(stage)")
            }

            // Three hours in: the width grows with the span (46 s) and the points stay within the bound.
            let later = origin.addingTimeInterval(3 * 3600)
            let long = try #require(
                try await store.deliveryFunnelTimeline(appID: app.id, eventID: event.id, until: later).buckets
            )
            #expect(
                long.stepMicroseconds == DeliveryFunnelTimeline.stepMicroseconds(spanMicroseconds: 3 * 3600 * 1_000_000)
            )
            #expect(
                long.stepMicroseconds == 46_000_000 && long.count == 235
                    && long.count <= DeliveryFunnelTimeline.maximumPoints
            )
            // An end before the last moment counted stretches to it: nothing falls outside the buckets.
            let early = try #require(
                try await store.deliveryFunnelTimeline(appID: app.id, eventID: event.id, until: origin).buckets
            )
            #expect(early.until == origin.addingTimeInterval(90) && early.count == 91)

            // Another app sees nothing of it.
            let stranger = try await fixture.makeApp("Other")
            #expect(
                try await store.deliveryFunnelTimeline(appID: stranger.id, eventID: event.id, until: until).buckets
                    == nil
            )
        }
    }
}
