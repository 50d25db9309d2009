/// What one HTTP connection may cost before it has earned more: how long it may sit idle, take to
/// send a request's headers and then its body, and how many connections a replica keeps open.
public struct ConnectionLimits: Sendable, Hashable {
    /// A connection with no request under way is closed after this long (`http.idleTimeoutSeconds`).
    public var idleTimeout: Duration
    /// A request's headers must have arrived this long after its first byte (`http.headerTimeoutSeconds`).
    public var headerTimeout: Duration
    /// A request's body must have arrived this long after its headers (`http.bodyTimeoutSeconds`).
    public var bodyTimeout: Duration
    /// Connections this replica keeps open at most; past them a new one is answered 503 and
    /// closed (`http.maxConnections`).
    public var maximumConnections: Int

    public init(
        idleTimeout: Duration = .seconds(60),
        headerTimeout: Duration = .seconds(10),
        bodyTimeout: Duration = .seconds(60),
        maximumConnections: Int = 1_000
    ) {
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.maximumConnections = maximumConnections
    }
}
