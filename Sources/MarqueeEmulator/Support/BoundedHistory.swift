/// The most recent `capacity` elements, oldest first: pushes per token or channel and rejected
/// requests are kept this way so a long benchmark cannot grow the emulator without bound.
struct BoundedHistory<Element> {
    private var storage: [Element] = []
    private var start = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    mutating func append(_ element: Element) {
        guard capacity > 0 else { return }
        if storage.count < capacity {
            storage.append(element)
        } else {
            storage[start] = element
            start = (start + 1) % capacity
        }
    }

    /// Changes the element matching `predicate` (the first one found), if it is still kept.
    mutating func modify(where predicate: (Element) -> Bool, _ change: (inout Element) -> Void) {
        guard let index = storage.indices.reversed().first(where: { predicate(storage[$0]) }) else { return }
        change(&storage[index])
    }

    /// Oldest first.
    var elements: [Element] {
        Array(storage[start...] + storage[..<start])
    }
}

extension BoundedHistory: Sendable where Element: Sendable {}
