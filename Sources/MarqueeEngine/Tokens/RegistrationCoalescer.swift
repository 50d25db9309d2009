import MarqueeCore
import Synchronization

/// Writes the registrations of single devices (`TokenRegistry.register(app:_:)`) together when they
/// arrive together: at kick-off every follower's app registers its own token, one request each,
/// and one statement per request made the database's per-statement work the bound (PostgreSQL
/// parsed, planned and committed 2,000 a second on 2 cores, where one statement of 1,000
/// registrations writes 40,000 a second). `RegistrationQueueStateMachine` decides who writes what;
/// this type waits and writes.
///
/// Each registration is still one statement and one round trip, answered from the rows it wrote:
/// the statement is shared, not split. A registration waits for no company: it is written at once
/// while a writer is free, and joins a batch only while every writer is busy. A batch that fails
/// is written again one registration at a time, so that one registration's failure is its own.
final class RegistrationCoalescer: Sendable {
    /// What a queued registration's owner does when its wait ends.
    enum Turn: Sendable {
        /// Its registration was written by another's statement: the row, or nil if none was written.
        case written(PushToStartToken?)
        /// It holds a writer's slot and writes the batch, its own registration first.
        case write([Entry])
        /// Its batch failed: it writes its registration alone.
        case writeAlone
    }

    typealias Entry = RegistrationQueueStateMachine<CheckedContinuation<Turn, Never>>.Entry
    /// The store's write of one statement's registrations, all of one app, with the rows written.
    typealias Write = @Sendable (AppID, [PushToStartRegistration]) async throws -> [PushToStartToken]

    private let state: Mutex<RegistrationQueueStateMachine<CheckedContinuation<Turn, Never>>>
    private let write: Write

    init(maximumWriters: Int, maximumBatch: Int, write: @escaping Write) {
        self.state = Mutex(RegistrationQueueStateMachine(maximumWriters: maximumWriters, maximumBatch: maximumBatch))
        self.write = write
    }

    /// Registrations waiting for a writer now.
    var queuedCount: Int { state.withLock { $0.queued.count } }

    /// Writes `registration` (validated and normalized) for the app, alone or in a batch, and
    /// answers its row as written; nil if the store wrote none.
    func register(appID: AppID, _ registration: PushToStartRegistration) async throws -> PushToStartToken? {
        if state.withLock({ $0.startWriting() }) {
            return try await writeHoldingSlot(appID: appID, registration, with: [])
        }
        let turn = await withCheckedContinuation { continuation in
            let entry = Entry(appID: appID, registration: registration, waiter: continuation)
            if let batch = state.withLock({ $0.wait(entry) }) { continuation.resume(returning: .write(batch)) }
        }
        switch turn {
        case .written(let token):
            return token
        case .write(let batch):
            return try await writeHoldingSlot(appID: appID, registration, with: batch.dropFirst())
        case .writeAlone:
            return try await Self.row(of: registration, in: write(appID, [registration]))
        }
    }

    /// Writes `registration` and `others` in one statement, passes the slot on, and answers each.
    private func writeHoldingSlot(
        appID: AppID,
        _ registration: PushToStartRegistration,
        with others: ArraySlice<Entry>
    ) async throws -> PushToStartToken? {
        let rows: [PushToStartToken]
        do {
            rows = try await write(appID, [registration] + others.map(\.registration))
        } catch {
            passSlot()
            guard !others.isEmpty else { throw error }
            for entry in others { entry.waiter.resume(returning: .writeAlone) }
            return try await Self.row(of: registration, in: write(appID, [registration]))
        }
        passSlot()
        if others.isEmpty { return rows.first }
        let byKey = Dictionary(rows.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        for entry in others { entry.waiter.resume(returning: .written(byKey[entry.registration.tokenKey])) }
        return byKey[registration.tokenKey]
    }

    /// Hands this writer's slot to the next batch's first owner, or frees it.
    private func passSlot() {
        if let next = state.withLock({ $0.finishWriting() }) { next[0].waiter.resume(returning: .write(next)) }
    }

    private static func row(of registration: PushToStartRegistration, in rows: [PushToStartToken]) -> PushToStartToken?
    {
        let key = registration.tokenKey
        return rows.first { $0.key == key }
    }
}
