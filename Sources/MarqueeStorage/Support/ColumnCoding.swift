import Foundation
import MarqueeCore

/// How values without a native column type are written, identically on both backends.
enum ColumnCoding {
    /// A set of environments as sorted, comma-separated names (`production,sandbox`); empty for none.
    static func environments(_ set: Set<APNSEnvironment>) -> String {
        set.map(\.rawValue).sorted().joined(separator: ",")
    }

    static func environments(_ column: String, entity: String) throws -> Set<APNSEnvironment> {
        var set: Set<APNSEnvironment> = []
        for name in column.split(separator: ",") {
            set.insert(try parse(APNSEnvironment.self, String(name), entity: entity))
        }
        return set
    }

    /// Tags as a JSON array of strings.
    static func tags(_ tags: [String]) -> String {
        json(.array(tags.map { .string($0) }))
    }

    static func tags(_ column: String, entity: String) throws -> [String] {
        guard case .array(let values) = try jsonValue(column, entity: entity) else {
            throw StoreError.corruptRow(entity: entity, detail: "tags are not a JSON array")
        }
        return try values.map { value in
            guard case .string(let tag) = value else {
                throw StoreError.corruptRow(entity: entity, detail: "a tag is not a string")
            }
            return tag
        }
    }

    /// JSON text exactly as `JSONValue` writes it (key order kept).
    static func json(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        value.write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads stored JSON with object keys sorted: values are exact, key order is not kept (PostgreSQL's
    /// `jsonb` keeps its own), so a value reads the same from both backends. Core's `JSONParser`
    /// reads the text in place: `JSONDecoder` through `Codable` cost a job's row most of its mapping
    /// (2 % of a server's samples during a million-token fan-out at 3c91728, the job's progress
    /// read each second and by a producer watching it).
    static func jsonValue(_ text: String, entity: String) throws -> JSONValue {
        var text = text
        let parsed = text.withUTF8 { bytes in
            Result { () throws(JSONParser.SyntaxError) in try JSONParser.parse(UnsafeRawBufferPointer(bytes)) }
        }
        guard case .success(let value) = parsed else {
            throw StoreError.corruptRow(entity: entity, detail: "invalid JSON")
        }
        return sortingKeys(value)
    }

    /// `value` with the keys of every object in it sorted.
    private static func sortingKeys(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array(let elements):
            return .array(elements.map(sortingKeys))
        case .object(let object):
            var sorted = JSONObject()
            for (key, element) in object.pairs.sorted(by: { $0.key < $1.key }) { sorted[key] = sortingKeys(element) }
            return .object(sorted)
        case .null, .bool, .integer, .number, .string:
            return value
        }
    }

    /// A raw-value enum read from a column, or `StoreError.corruptRow`.
    static func parse<Value: RawRepresentable>(
        _ type: Value.Type,
        _ raw: Value.RawValue,
        entity: String
    ) throws -> Value {
        guard let value = Value(rawValue: raw) else {
            throw StoreError.corruptRow(entity: entity, detail: "unknown \(Value.self) \(raw)")
        }
        return value
    }

    /// Registrations deduplicated, the last one winning: one statement may not upsert the same row
    /// twice, and a batch naming one device twice (the same device ID, environment and attributes
    /// type under two tokens) keeps the device's last registration, the token it rotated to last
    /// (an earlier one would otherwise become a second row of the same device).
    static func deduplicated(_ registrations: [PushToStartRegistration]) -> [PushToStartRegistration] {
        var tokens: Set<RegisteredTokenKey> = []
        var devices: Set<RegisteredDeviceKey> = []
        var unique: [PushToStartRegistration] = []
        unique.reserveCapacity(registrations.count)
        for registration in registrations.reversed() {
            guard tokens.insert(registration.tokenKey).inserted else { continue }
            if let device = registration.deviceKey, !devices.insert(device).inserted { continue }
            unique.append(registration)
        }
        unique.reverse()
        return unique
    }

    /// The states a channel may be moved to `target` from.
    static func channelStates(allowingTransitionTo target: ChannelState) -> [String] {
        ChannelState.allCases.filter { $0.canTransition(to: target) }.map(\.rawValue)
    }
}
