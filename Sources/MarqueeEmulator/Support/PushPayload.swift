import MarqueeCore

/// A push body as a device reads it: validated as JSON once, with the members of its `aps`
/// dictionary indexed by byte range and materialised only when a rule looks at them. A start that
/// the device ignores never builds its `attributes` or `content-state`.
struct PushPayload: Sendable {
    let bytes: [UInt8]
    /// The members of the top-level `aps` object; `nil` when the body has none.
    let aps: APSDictionary?

    /// `nil` when the body is not JSON.
    init?(bytes: [UInt8]) {
        guard let index = try? JSONParser.indexObject(bytes, nestedKey: "aps") else { return nil }
        self.bytes = bytes
        self.aps = index.nested.map { APSDictionary(bytes: bytes, members: $0) }
    }
}

/// The `aps` dictionary of a push body, read member by member.
struct APSDictionary: Sendable {
    let bytes: [UInt8]
    let members: [(key: String, range: Range<Int>)]

    /// The member's value, parsed now; `nil` when absent. (Duplicate keys: the last one wins, as
    /// with `JSONDecoder`.)
    subscript(key: String) -> JSONValue? {
        guard let member = members.last(where: { $0.key == key }) else { return nil }
        return try? JSONParser.parse(bytes, range: member.range)
    }

    func contains(_ key: String) -> Bool {
        members.contains { $0.key == key }
    }
}
