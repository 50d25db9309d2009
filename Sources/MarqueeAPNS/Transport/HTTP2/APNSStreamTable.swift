import NIOHTTP2

/// The requests in flight on one connection, keyed by stream ID without hashing: client stream IDs
/// are consecutive odd numbers, so `(id / 2) mod capacity` is a slot. A slot still taken by a slow
/// stream when the IDs wrap around simply means no new stream until it finishes; with a capacity of
/// several times the stream limit that is rare, and it is back-pressure rather than an error.
struct APNSStreamTable<Entry> {
    private var slots: [(id: Int32, entry: Entry)?]
    private let mask: Int
    private(set) var count = 0

    init(minimumCapacity: Int) {
        var capacity = 64
        while capacity < minimumCapacity { capacity <<= 1 }
        slots = Array(repeating: nil, count: capacity)
        mask = capacity - 1
    }

    var isEmpty: Bool { count == 0 }

    private func slot(_ id: HTTP2StreamID) -> Int { (Int(Int32(id)) >> 1) & mask }

    /// Whether `id` can be stored now.
    func canInsert(_ id: HTTP2StreamID) -> Bool { slots[slot(id)] == nil }

    mutating func insert(_ entry: Entry, for id: HTTP2StreamID) {
        precondition(slots[slot(id)] == nil, "stream slot taken; check canInsert first")
        slots[slot(id)] = (Int32(id), entry)
        count += 1
    }

    subscript(id: HTTP2StreamID) -> Entry? {
        get {
            guard let stored = slots[slot(id)], stored.id == Int32(id) else { return nil }
            return stored.entry
        }
        set {
            let index = slot(id)
            guard let stored = slots[index], stored.id == Int32(id), let newValue else { return }
            slots[index] = (stored.id, newValue)
        }
    }

    @discardableResult
    mutating func remove(_ id: HTTP2StreamID) -> Entry? {
        let index = slot(id)
        guard let stored = slots[index], stored.id == Int32(id) else { return nil }
        slots[index] = nil
        count -= 1
        return stored.entry
    }

    /// Removes and returns every entry whose stream ID satisfies `predicate`, in stream-ID order.
    mutating func removeAll(where predicate: (HTTP2StreamID) -> Bool) -> [Entry] {
        var removed: [(id: Int32, entry: Entry)] = []
        for index in slots.indices {
            if let stored = slots[index], predicate(HTTP2StreamID(stored.id)) {
                removed.append(stored)
                slots[index] = nil
                count -= 1
            }
        }
        return removed.sorted { $0.id < $1.id }.map(\.entry)
    }

    /// Removes and returns every entry with its stream ID, in stream-ID order.
    mutating func removeAllWithIDs() -> [(id: HTTP2StreamID, entry: Entry)] {
        var removed: [(id: Int32, entry: Entry)] = []
        removed.reserveCapacity(count)
        for index in slots.indices {
            if let stored = slots[index] {
                removed.append(stored)
                slots[index] = nil
            }
        }
        count = 0
        return removed.sorted { $0.id < $1.id }.map { (HTTP2StreamID($0.id), $0.entry) }
    }
}
