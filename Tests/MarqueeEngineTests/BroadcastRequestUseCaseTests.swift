import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// What a broadcast request names and what it is refused for before anything reaches APNs.
@Suite("Engine use case: broadcast requests")
struct BroadcastRequestUseCaseTests {
    let update = BroadcastDraft(event: .update, contentState: ["score": .string("1-0")])

    var sentAnything: (EngineHarness) -> Bool {
        { harness in APNSEnvironment.allCases.contains { !harness.apns($0).broadcasts.isEmpty } }
    }

    @Test("a broadcast naming one environment goes to that environment's channel only")
    func oneEnvironment() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        var draft = update
        draft.environments = [.production]
        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: draft)

        #expect(report.results.map(\.environment) == [.production])
        #expect(harness.apns(.production).broadcasts.count == 1)
        #expect(harness.apns(.sandbox).broadcasts.isEmpty)
        await harness.close()
    }

    @Test("an end goes out as an end, and the event takes no start after it is closed")
    func endThenClosed() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final", environments: [.sandbox])
        let end = BroadcastDraft(event: .end, contentState: ["score": .string("3-1")])
        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: end)
        #expect(report.allAccepted)
        #expect(harness.apns(.sandbox).broadcasts.map { $0.aps["event"] as? String } == ["end"])

        _ = try await harness.events.close(app: harness.app, key: "final")
        await #expect(throws: EngineError.self) {
            try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        }
        #expect(harness.apns(.sandbox).broadcasts.count == 1)
        await harness.close()
    }

    @Test("a broadcast to an unknown event, or over APNs' payload limit, is refused and nothing is sent")
    func refusedBeforeSending() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        await #expect(throws: EngineError.self) {
            try await harness.broadcasts.broadcast(app: harness.app, key: "unknown", draft: update)
        }
        let commentary = String(repeating: "x", count: 6000)
        let huge = BroadcastDraft(event: .update, contentState: ["commentary": .string(commentary)])
        await #expect(throws: EngineError.self) {
            try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: huge)
        }
        #expect(!sentAnything(harness))
        await harness.close()
    }
}
