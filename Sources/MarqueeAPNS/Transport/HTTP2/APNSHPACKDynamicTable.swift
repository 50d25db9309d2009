/// The HPACK dynamic table (RFC 7541 §2.3.2, §4) of the fields an APNs server's header blocks added,
/// as the client's decoder keeps it: newest first, sized by §4.1 (each entry its name's and value's
/// octets and 32), the oldest evicted to make room.
///
/// The entries' bytes live in one array, newest at its end: evicting the oldest leaves the live
/// bytes contiguous, and when an entry would not fit after them they are moved to the front, so an
/// entry costs a copy of its bytes and no allocation of its own.
struct APNSHPACKDynamicTable {
    struct Entry {
        var start: Int
        var nameLength: Int
        var valueLength: Int

        var size: Int { nameLength + valueLength + 32 }
    }

    /// The live entries, oldest first.
    private var entries: [Entry] = []
    /// Where the oldest live entry is in `entries` (those before it were evicted).
    private var oldest = 0
    private var storage: [UInt8]
    private var end = 0
    private(set) var size = 0
    private(set) var maximumSize: Int

    init(maximumSize: Int) {
        self.maximumSize = maximumSize
        // Live bytes never exceed the maximum size, so twice that moves them at most once per table's worth.
        self.storage = [UInt8](repeating: 0, count: max(2 * maximumSize, 64))
    }

    var count: Int { entries.count - oldest }

    /// The entry at `index`, 0 being the newest (the table's index 62 in §2.3.3's index space).
    func entry(at index: Int) -> Entry? {
        guard index >= 0, index < count else { return nil }
        return entries[entries.count - 1 - index]
    }

    func withBytes<Result>(
        of entry: Entry,
        _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result {
        try storage.withUnsafeBufferPointer { bytes in
            try body(
                UnsafeBufferPointer(rebasing: bytes[entry.start..<entry.start + entry.nameLength]),
                UnsafeBufferPointer(
                    rebasing: bytes[entry.start + entry.nameLength..<entry.start + entry.nameLength + entry.valueLength]
                )
            )
        }
    }

    /// Adds a field (§4.4): older entries go until it fits; one larger than the table empties it and is not kept.
    mutating func add(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let entrySize = name.count + value.count + 32
        guard entrySize <= maximumSize else {
            removeAll()
            return
        }
        evict(toFit: maximumSize - entrySize)
        let length = name.count + value.count
        if end + length > storage.count { compact() }
        storage.withUnsafeMutableBufferPointer { bytes in
            if name.count > 0 {
                UnsafeMutableBufferPointer(rebasing: bytes[end..<end + name.count]).initialize(from: name)
            }
            if value.count > 0 {
                UnsafeMutableBufferPointer(rebasing: bytes[end + name.count..<end + length]).initialize(from: value)
            }
        }
        entries.append(Entry(start: end, nameLength: name.count, valueLength: value.count))
        end += length
        size += entrySize
    }

    /// A dynamic table size update (§6.3), already checked against what the client's settings allow.
    mutating func resize(to maximumSize: Int) {
        self.maximumSize = maximumSize
        evict(toFit: maximumSize)
        if storage.count < 2 * maximumSize {
            compact()
            storage.append(contentsOf: repeatElement(0, count: 2 * maximumSize - storage.count))
        }
    }

    private mutating func evict(toFit limit: Int) {
        while size > limit, oldest < entries.count {
            size -= entries[oldest].size
            oldest += 1
        }
        if oldest == entries.count {
            removeAll()
        } else if oldest >= 64, oldest * 2 >= entries.count {
            // Evicted records are dropped now and then, not kept until the bytes are moved:
            // entries of empty fields take no bytes.
            entries.removeFirst(oldest)
            oldest = 0
        }
    }

    private mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        oldest = 0
        end = 0
        size = 0
    }

    /// Moves the live entries' bytes and records to the front.
    private mutating func compact() {
        entries.removeFirst(oldest)
        oldest = 0
        guard let first = entries.first else {
            end = 0
            return
        }
        let shift = first.start
        guard shift > 0 else { return }
        // Forward, byte by byte: the regions overlap, and this runs once per table's worth of bytes.
        for index in shift..<end { storage[index - shift] = storage[index] }
        for index in entries.indices { entries[index].start -= shift }
        end -= shift
    }
}
