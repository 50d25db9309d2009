import Foundation

/// Events, idempotent on the producer's own key.
public protocol EventStore: Sendable {
    /// Inserts the event, or returns the app's existing event with the same external key
    /// (`created == false`) untouched.
    func createEvent(_ event: Event) async throws -> (event: Event, created: Bool)
    func event(appID: AppID, id: EventID) async throws -> Event?
    func event(appID: AppID, externalKey: String) async throws -> Event?
    /// The event by its key with where it has activities on update tokens, in one read.
    func broadcastTarget(appID: AppID, externalKey: String) async throws -> BroadcastTarget?
    /// Returns false if the app has no such event.
    func setEventState(appID: AppID, id: EventID, state: EventState, at: Date) async throws -> Bool
    /// Replaces the event's mutable fields (`title`, `environments`, `priorityPolicy`, `plannedStart`,
    /// `plannedEnd`, `timeline`, `state`, `updatedAt`); `StoreError.notFound` if the app has no such event.
    /// A stored `live` stays live when the event says `scheduled`: the edit was read before a start's
    /// first accepted device (`commitDeliveryBatch` makes the event live).
    func updateEvent(_ event: Event) async throws -> Event
    /// The app's events in `externalKey` order after `afterKey` (keyset pagination), at most `limit`,
    /// only those in `states` when given.
    func events(appID: AppID, states: Set<EventState>?, afterKey: String?, limit: Int) async throws -> [Event]
    /// How many of the app's events are in each state (states with none are left out).
    func eventCounts(appID: AppID) async throws -> [EventState: Int64]
    /// Deletes the event with its channels' rows, activities and start ledger; false if the app
    /// has no such event.
    func deleteEvent(appID: AppID, id: EventID) async throws -> Bool
}
