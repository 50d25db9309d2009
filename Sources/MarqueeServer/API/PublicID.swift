import Foundation
import MarqueeCore

/// Marquee's IDs as the API shows them: opaque, with a type prefix (`app_…`, `key_…`, `chn_…`,
/// `evt_…`, `job_…`, `sch_…`), so that an ID pasted in the wrong place is recognisably wrong. The
/// form is Core's (`Identifier.publicID`), which the log and the metrics' `job` label use too.
enum PublicID {
    static func app(_ id: AppID) -> String { id.publicID }
    static func apiKey(_ id: APIKeyID) -> String { id.publicID }
    static func channel(_ id: ChannelID) -> String { id.publicID }
    static func event(_ id: EventID) -> String { id.publicID }
    static func job(_ id: JobID) -> String { id.publicID }
    static func schedule(_ id: ScheduleID) -> String { id.publicID }

    static func parseApp(_ text: String) -> AppID? { AppID(publicID: text) }
    static func parseAPIKey(_ text: String) -> APIKeyID? { APIKeyID(publicID: text) }
    static func parseChannel(_ text: String) -> ChannelID? { ChannelID(publicID: text) }
    static func parseJob(_ text: String) -> JobID? { JobID(publicID: text) }
    static func parseSchedule(_ text: String) -> ScheduleID? { ScheduleID(publicID: text) }
}

/// The opaque `after` cursor of lists: the last item's sort key, base64url.
enum Cursor {
    static func encode(_ key: String) -> String { Base64URL.encode(Array(key.utf8)) }

    /// `nil` for no cursor; throws a field problem for one that is not Marquee's. An empty
    /// `after=` is the first page, as no `after` is: a `nextCursor` is never empty, and a client
    /// that builds its URL with an empty value for "from the start" means exactly that.
    static func decode(_ cursor: String?) throws -> String? {
        guard let cursor, !cursor.isEmpty else { return nil }
        guard let data = Base64URL.decode(cursor) else { throw notIssued }
        // Any key is a place in the order; bytes that are not UTF-8 are read as the replacement
        // character rather than refused, so that every cursor of the documented form is taken.
        return String(decoding: data, as: UTF8.self)
    }

    /// A list key ordered by time, then ID: the time in microseconds since 1970 and the ID.
    static func key(_ time: Date, _ id: some CustomStringConvertible) -> String {
        "\(Int64((time.timeIntervalSince1970 * 1_000_000).rounded()))|\(id)"
    }

    /// The time and the ID's text of a `key(_:_:)`; `notIssued` for any other key.
    static func timeAndID(_ key: String) throws -> (Date, String) {
        let parts = key.split(separator: "|", maxSplits: 1)
        guard parts.count == 2, let micros = Int64(parts[0]) else { throw notIssued }
        return (Date(timeIntervalSince1970: Double(micros) / 1_000_000), String(parts[1]))
    }

    /// A cursor of the documented form that this API did not issue: 422 naming `after`.
    static let notIssued = Problem.invalid([
        .init(parameter: "after", in: "query", detail: "must be the nextCursor of a previous page")
    ])

    /// `limit` within 1...1000, 100 by default.
    static func limit(_ limit: Int?) throws -> Int {
        guard let limit else { return 100 }
        guard (1...1000).contains(limit) else {
            throw Problem.invalid([.init(parameter: "limit", in: "query", detail: "must be an integer from 1 to 1000")])
        }
        return limit
    }
}
