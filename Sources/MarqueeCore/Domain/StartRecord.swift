import Foundation

/// A start-ledger entry: the one start an event sent to a push-to-start token, with what APNs
/// answered. An accepted start is recorded here only, not also as a `Delivery` (one row per token
/// instead of two is what lets a fan-out commit at the transport's pace).
public struct StartRecord: Sendable, Hashable {
    public var tokenRowID: Int64
    /// The job that sent it (the column is nullable: before migration 0008 a deleted job cleared it).
    public var jobID: JobID?
    /// The send that APNs accepted (1 for the first try); `nil` for entries written before the
    /// ledger recorded it.
    public var attempt: Int?
    /// The `apns-id` APNs answered with.
    public var apnsID: UUID?
    public var sentAt: Date?
    /// When APNs accepted it.
    public var startedAt: Date

    public init(tokenRowID: Int64, jobID: JobID?, attempt: Int?, apnsID: UUID?, sentAt: Date?, startedAt: Date) {
        self.tokenRowID = tokenRowID
        self.jobID = jobID
        self.attempt = attempt
        self.apnsID = apnsID
        self.sentAt = sentAt
        self.startedAt = startedAt
    }
}
