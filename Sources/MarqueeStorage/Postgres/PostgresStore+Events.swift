import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func createEvent(_ event: Event) async throws -> (event: Event, created: Bool) {
        let inserted = try await firstRow(
            """
            INSERT INTO events (id, app_id, external_key, title, attributes_type, environments, storage_policy,
                                planned_start, planned_end, state, created_at, updated_at)
            SELECT \(event.id.uuid), a.id, \(event.externalKey), \(event.title), \(event.attributesType),
                   \(ColumnCoding.environments(event.environments)), \(event.storagePolicy.rawValue),
                   \(event.plannedStart), \(event.plannedEnd), \(event.state.rawValue), \(event.createdAt), \(event.updatedAt)
            FROM apps a WHERE a.id = \(event.appID.uuid)
            ON CONFLICT (app_id, external_key) DO NOTHING
            RETURNING \(unescaped: RowMapping.eventColumns)
            """
        )
        if let inserted { return (try RowMapping.event(PostgresColumns(inserted, entity: "event")), true) }
        if let existing = try await self.event(appID: event.appID, externalKey: event.externalKey) {
            return (existing, false)
        }
        throw StoreError.notFound(entity: "app", id: event.appID.description)
    }

    public func event(appID: AppID, id: EventID) async throws -> Event? {
        try await firstRow(
            "SELECT \(unescaped: RowMapping.eventColumns) FROM events WHERE app_id = \(appID.uuid) AND id = \(id.uuid)"
        ).mapped(RowMapping.event)
    }

    public func event(appID: AppID, externalKey: String) async throws -> Event? {
        try await firstRow(
            """
            SELECT \(unescaped: RowMapping.eventColumns) FROM events
            WHERE app_id = \(appID.uuid) AND external_key = \(externalKey)
            """
        ).mapped(RowMapping.event)
    }

    public func setEventState(appID: AppID, id: EventID, state: EventState, at: Date) async throws -> Bool {
        try await !rows(
            """
            UPDATE events SET state = \(state.rawValue), updated_at = \(at)
            WHERE app_id = \(appID.uuid) AND id = \(id.uuid) RETURNING id
            """
        ).isEmpty
    }
}
