import MarqueeCore

/// The decisions of `RegistrationCoalescer`, apart from its waiting and writing: which single
/// registrations are written now, which together, and which wait for a writer.
///
/// At most `maximumWriters` statements are in flight. A registration that arrives while a writer is
/// free takes it and is written at once, alone: at a low rate a registration costs its round trip
/// and waits for no company. One that arrives while every writer is busy queues. When a writer
/// finishes and the queue is not empty, its slot passes to the next batch: the oldest queued
/// registration and the later ones of its app that can share its statement, up to `maximumBatch`.
/// So under load one statement carries what arrived while the others were in flight, and the rate
/// is the store's batch rate rather than one round trip per device.
///
/// Two registrations of one token, or of one device, never share a statement: the store folds such
/// a pair into one row (the last wins), and each request answers the row as its own registration
/// wrote it. The second waits for a later batch, in its place in the queue.
struct RegistrationQueueStateMachine<Waiter: Sendable> {
    struct Entry: Sendable {
        let appID: AppID
        let registration: PushToStartRegistration
        let waiter: Waiter
    }

    let maximumWriters: Int
    let maximumBatch: Int
    /// Statements in flight, each a writer's slot.
    private(set) var writing = 0
    /// Oldest first. Not empty only while every writer is busy: a finishing writer hands its slot to
    /// the queue before it frees it.
    private(set) var queued: [Entry] = []

    init(maximumWriters: Int, maximumBatch: Int) {
        self.maximumWriters = max(1, maximumWriters)
        self.maximumBatch = max(1, maximumBatch)
    }

    /// Takes a writer for a registration that has not queued: true when one was free.
    mutating func startWriting() -> Bool {
        guard writing < maximumWriters, queued.isEmpty else { return false }
        writing += 1
        return true
    }

    /// Queues `entry`, unless a writer became free meanwhile: then it takes it and `entry` is the
    /// whole batch to write.
    mutating func wait(_ entry: Entry) -> [Entry]? {
        if startWriting() { return [entry] }
        queued.append(entry)
        return nil
    }

    /// A writer's statement ended. The next batch, whose first entry's owner now holds the slot and
    /// writes it; nil when nothing waits and the slot is free again.
    mutating func finishWriting() -> [Entry]? {
        guard let first = queued.first else {
            writing -= 1
            return nil
        }
        var batch: [Entry] = []
        var tokens: Set<RegisteredTokenKey> = []
        var devices: Set<RegisteredDeviceKey> = []
        var left: [Entry] = []
        left.reserveCapacity(queued.count)
        for entry in queued {
            let token = entry.registration.tokenKey
            let device = entry.registration.deviceKey
            guard batch.count < maximumBatch, entry.appID == first.appID, !tokens.contains(token),
                device.map({ !devices.contains($0) }) ?? true
            else {
                left.append(entry)
                continue
            }
            tokens.insert(token)
            if let device { devices.insert(device) }
            batch.append(entry)
        }
        queued = left
        return batch
    }
}
