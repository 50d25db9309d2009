import Foundation

/// Delivery outcomes and the start ledger (one start per event and token).
public protocol DeliveryStore: Sendable {
    /// Commits the batch in one transaction: outcomes, ledger entries for accepted starts, token
    /// retirements, the job's progress and checkpoint. Nothing is written if any part fails, and
    /// `StoreError.leaseLost` if the worker no longer holds the job.
    func commitDeliveryBatch(_ batch: DeliveryBatch, at: Date) async throws

    func deliveries(appID: AppID, jobID: JobID) async throws -> [Delivery]
    /// The job's final outcomes counted by outcome and reason (`failed` rows waiting for a retry
    /// included): what a job's progress reports as "failed by reason".
    func deliveryCounts(appID: AppID, jobID: JobID) async throws -> [DeliveryCount]
    /// The tokens among `tokenRowIDs` that the event's start ledger already holds.
    func startedTokens(appID: AppID, eventID: EventID, among tokenRowIDs: [Int64]) async throws -> Set<Int64>
}
