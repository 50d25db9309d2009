import Foundation

/// Events, idempotent on the producer's own key.
public protocol EventStore: Sendable {
    /// Inserts the event, or returns the app's existing event with the same external key
    /// (`created == false`) untouched.
    func createEvent(_ event: Event) async throws -> (event: Event, created: Bool)
    func event(appID: AppID, id: EventID) async throws -> Event?
    func event(appID: AppID, externalKey: String) async throws -> Event?
    /// Returns false if the app has no such event.
    func setEventState(appID: AppID, id: EventID, state: EventState, at: Date) async throws -> Bool
}
