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
            #expect(try await !fixture.store.setEventState(appID: other.id, id: event.id, state: .cancelled, at: fixture.now))
            #expect(try await fixture.store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now))
            #expect(try await fixture.store.event(appID: app.id, id: event.id)?.state == .live)
        }
    }
}
