import Foundation

/// Delivery outcomes and the start ledger (one start per event and token).
public protocol DeliveryStore: Sendable {
    /// Commits the batch in one transaction: accepted starts in the event's ledger, the other
    /// outcomes as deliveries, token retirements, the job's progress and checkpoint. Nothing is
    /// written if any part fails (the event not the app's included), and `StoreError.leaseLost` if
    /// the worker no longer holds the job. Committing the same batch again writes nothing twice.
    /// A batch with an accepted start makes its event `live` if it was `scheduled` (no other state
    /// changes: an ended event stays ended).
    ///
    /// The batch's token row IDs come from the job's audience, read within the app. A token deleted
    /// since then (or not the app's) does not hold the batch up: the pushes were sent, so the rest
    /// commits and the job does not send its window again. Such a token gets no delivery row; its
    /// ledger entry, if the store writes one, is never read (every reader starts from a token row,
    /// and token row IDs are never reused) and goes with the event. A token row merged into its
    /// device's row since (a rotation, `upsertPushToStartTokens`) is that device's: its accepted
    /// start is written to the device's row (unless that row has its own for the event), so the
    /// device is never started again.
    func commitDeliveryBatch(_ batch: DeliveryBatch, at: Date) async throws

    /// The job's recorded outcomes other than accepted starts (those are in the start ledger:
    /// `startRecords`), by token and attempt.
    func deliveries(appID: AppID, jobID: JobID) async throws -> [Delivery]
    /// The jobs' final outcomes other than accepted starts, counted together by outcome and reason
    /// (`failed` rows waiting for a retry included): what a job's progress reports as "failed by
    /// reason", a partitioned job's parts in one read.
    func deliveryCounts(appID: AppID, jobIDs: [JobID]) async throws -> [DeliveryCount]
    /// The event's start-ledger entries for the tokens among `tokenRowIDs`, by token.
    func startRecords(appID: AppID, eventID: EventID, among tokenRowIDs: [Int64]) async throws -> [StartRecord]
}

extension DeliveryStore {
    /// The tokens among `tokenRowIDs` that the event's start ledger already holds.
    public func startedTokens(appID: AppID, eventID: EventID, among tokenRowIDs: [Int64]) async throws -> Set<Int64> {
        Set(try await startRecords(appID: appID, eventID: eventID, among: tokenRowIDs).map(\.tokenRowID))
    }
}
