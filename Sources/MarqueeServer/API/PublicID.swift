import Foundation
import MarqueeCore

/// Marquee's IDs as the API shows them: opaque, with a type prefix (`app_…`, `key_…`, `chn_…`,
/// `evt_…`, `job_…`, `sch_…`), so that an ID pasted in the wrong place is recognisably wrong.
enum PublicID {
    static func app(_ id: AppID) -> String { format("app", id.uuid) }
    static func apiKey(_ id: APIKeyID) -> String { format("key", id.uuid) }
    static func channel(_ id: ChannelID) -> String { format("chn", id.uuid) }
    static func event(_ id: EventID) -> String { format("evt", id.uuid) }
    static func job(_ id: JobID) -> String { format("job", id.uuid) }
    static func schedule(_ id: ScheduleID) -> String { format("sch", id.uuid) }

    static func parseApp(_ text: String) -> AppID? { parse("app", text).map(AppID.init) }
    static func parseAPIKey(_ text: String) -> APIKeyID? { parse("key", text).map(APIKeyID.init) }
    static func parseChannel(_ text: String) -> ChannelID? { parse("chn", text).map(ChannelID.init) }
    static func parseJob(_ text: String) -> JobID? { parse("job", text).map(JobID.init) }
    static func parseSchedule(_ text: String) -> ScheduleID? { parse("sch", text).map(ScheduleID.init) }

    private static func format(_ prefix: String, _ uuid: UUID) -> String {
        let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        return "\(prefix)_\(Hex.encode(bytes))"
    }

    private static func parse(_ prefix: String, _ text: String) -> UUID? {
        guard text.hasPrefix(prefix + "_"), let bytes = Hex.decode(text.dropFirst(prefix.count + 1)), bytes.count == 16
        else { return nil }
        return bytes.withUnsafeBytes { raw in UUID(uuid: raw.loadUnaligned(as: uuid_t.self)) }
    }
}

/// The opaque `after` cursor of lists: the last item's sort key, base64url.
enum Cursor {
    static func encode(_ key: String) -> String { Base64URL.encode(Array(key.utf8)) }

    /// `nil` for no cursor; throws a field problem for one that is not Marquee's.
    static func decode(_ cursor: String?) throws -> String? {
        guard let cursor else { return nil }
        guard let data = Base64URL.decode(cursor) else { throw notIssued }
        // Any key is a place in the order; bytes that are not UTF-8 are read as the replacement
        // character rather than refused, so that every cursor of the documented form is taken.
        return String(decoding: data, as: UTF8.self)
    }

    /// A cursor of the documented form that this API did not issue: 422 naming `after`.
    static let notIssued = Problem.invalid([.init(parameter: "after", in: "query", detail: "must be the nextCursor of a previous page")])

    /// `limit` within 1...1000, 100 by default.
    static func limit(_ limit: Int?) throws -> Int {
        guard let limit else { return 100 }
        guard (1...1000).contains(limit) else {
            throw Problem.invalid([.init(parameter: "limit", in: "query", detail: "must be an integer from 1 to 1000")])
        }
        return limit
    }
}
