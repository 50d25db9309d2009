/// A call to the store's backend that did not answer within its deadline (`database.callTimeoutSeconds`).
/// The caller was answered with this error and the call was abandoned; whether it took effect is
/// unknown, as after a lost answer. Not a `StoreError`: the store refused nothing, so a caller that
/// retries failed backend calls retries this one too.
public struct StoreCallTimedOut: Error, Sendable, Hashable, CustomStringConvertible {
    /// The deadline that passed.
    public let limit: Duration

    public init(limit: Duration) {
        self.limit = limit
    }

    public var description: String {
        """
        the database did not answer within \(limit.wholeMilliseconds) ms (database.callTimeoutSeconds); the call \
        was abandoned and may or may not have taken effect
        """
    }
}
