/// A store refusing an operation for a domain reason. Backend failures (connection loss, SQL
/// errors) surface as the backend's own errors.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A row the operation needs does not exist for this app.
    case notFound(entity: String, id: String)
    /// A row with the same unique key exists.
    case duplicate(entity: String, key: String)
    /// The row is not in a state that allows the change.
    case invalidTransition(entity: String, id: String, from: String, to: String)
    /// The row exists but its state does not allow the operation (a broadcast to a channel that is
    /// not active).
    case notActive(entity: String, id: String, state: String)
    /// The worker no longer holds the job's lease: another worker took it over after expiry.
    case leaseLost(JobID)
    /// A value read back from the database does not map to the domain (a corrupt or newer row).
    case corruptRow(entity: String, detail: String)

    public var description: String {
        switch self {
        case .notFound(let entity, let id): "\(entity) \(id) not found"
        case .duplicate(let entity, let key): "\(entity) \(key) already exists"
        case .invalidTransition(let entity, let id, let from, let to):
            "\(entity) \(id) cannot move from \(from) to \(to)"
        case .notActive(let entity, let id, let state): "\(entity) \(id) is \(state), not active"
        case .leaseLost(let id): "the lease on job \(id) was lost"
        case .corruptRow(let entity, let detail): "unreadable \(entity) row: \(detail)"
        }
    }
}
