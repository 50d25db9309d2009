import Foundation
import MarqueeCore

extension RowMapping {
    /// The offer's columns; `tags`, `attributes`, `content_state` and `alert` as JSON text
    /// (`content_state` already the newest broadcast one where the query chose it).
    static func lateJoinOffer(_ row: some ColumnReader) throws -> LateJoinOffer {
        func object(_ column: String) throws -> JSONObject? {
            guard let text = try row.optionalString(column) else { return nil }
            guard case .object(let object) = try ColumnCoding.jsonValue(text, entity: row.entity) else {
                throw StoreError.corruptRow(entity: row.entity, detail: "\(column) is not an object")
            }
            return object
        }
        return LateJoinOffer(
            appID: try row.id("app_id"),
            eventID: try row.id("event_id"),
            environment: try row.parse("environment", as: APNSEnvironment.self),
            attributesType: try row.string("attributes_type"),
            enabled: try row.bool("enabled"),
            everyone: try row.bool("everyone"),
            tags: try ColumnCoding.tags(try row.string("tags"), entity: row.entity),
            attributes: try row.required(object("attributes"), "attributes"),
            contentState: try row.required(object("content_state"), "content_state"),
            alert: try object("alert"),
            inputPushToken: try row.bool("input_push_token"),
            jobID: try row.id("job_id"),
            updatedAt: try row.date("updated_at")
        )
    }

    static func pendingStart(_ row: some ColumnReader) throws -> PendingStart {
        PendingStart(
            id: try row.int64("id"),
            appID: try row.id("app_id"),
            eventID: try row.id("event_id"),
            environment: try row.parse("environment", as: APNSEnvironment.self),
            tokenRowID: try row.int64("token_id"),
            token: try row.string("token"),
            reason: try row.parse("reason", as: PendingStartReason.self),
            pendingSince: try row.date("pending_since"),
            sourceJobID: try row.optionalID("source_job_id")
        )
    }

    /// Whether an event may take late joiners in `environment` (a column) now, as a condition on
    /// `events e`: late joining on, and live (`live`, or `scheduled` with a start in its ledger,
    /// which is how an event whose first start went out looked before its state followed the
    /// start), with no end accepted in that environment: README's "started, not ended", and an
    /// event stays `live` between its end broadcast and its close. Never ended or cancelled.
    static func eventTakesLateJoiners(environment: String) -> String {
        """
        e.late_joiners AND (e.state = 'live' OR (e.state = 'scheduled' AND EXISTS (SELECT 1 FROM start_ledger s WHERE \
        s.event_id = e.id))) AND NOT \(endBroadcastAccepted(eventID: "e.id", environment: environment))
        """
    }

    /// Whether APNs accepted an `end` broadcast on a channel of the event `eventID` (a column) in
    /// `environment` (a column): the end the broadcast log records, as its `first_end_at` reads it.
    static func endBroadcastAccepted(eventID: String, environment: String) -> String {
        """
        EXISTS (SELECT 1 FROM broadcast_log l JOIN channels c ON c.id = l.channel_id
                WHERE c.event_id = \(eventID) AND c.environment = \(environment) AND l.event = 'end' AND l.status = 200)
        """
    }

    /// Whether start-fan-out parts of the pending start `p`'s event and environment are still at
    /// work, given how the dialect reads a job argument (`eventID`, `environment`): a pending start
    /// waits for them, as such a part may reach the token itself. `eventIDText` is `p.event_id` as
    /// text in the dialect.
    static func pendingStartBusy(argument: (String) -> String, eventIDText: String) -> String {
        """
        EXISTS (SELECT 1 FROM jobs j
                WHERE j.app_id = p.app_id AND j.kind = 'activity.start.partition' AND j.state IN ('pending', 'running')
                  AND \(argument("eventID")) = \(eventIDText) AND \(argument("environment")) = p.environment)
        """
    }
}
