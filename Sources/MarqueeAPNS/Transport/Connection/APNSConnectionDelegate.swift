/// What a connection (`APNSPoolConnection`; over a socket, `APNSConnectionHandler`) reports to
/// whoever owns it (the pool), on the connection's event loop. The connection never decides what
/// happens to a request after it left: answered, unprocessed or uncertain, the owner takes it from
/// there (retries, sending again, completing it).
protocol APNSConnectionDelegate: AnyObject {
    /// The server's first SETTINGS arrived: streams may open.
    func connectionBecameReady(_ connection: any APNSPoolConnection)
    /// No new streams from here on (GOAWAY, token retired, stream IDs used up).
    func connectionStartedDraining(_ connection: any APNSPoolConnection)
    /// APNs answered `request` (accepted or rejected).
    func connection(
        _ connection: any APNSPoolConnection,
        answered request: APNSQueuedRequest,
        response: APNSResponse,
        tokenGeneration: Int
    )
    /// APNs provably did not process these (above a GOAWAY's last-stream-id, `REFUSED_STREAM`,
    /// never written), in the order they were written.
    func connection(_ connection: any APNSPoolConnection, didNotProcess requests: [APNSQueuedRequest])
    /// `request` was written and no answer will come: APNs may have processed it.
    func connection(_ connection: any APNSPoolConnection, leftUncertain request: APNSQueuedRequest, reason: String)
    /// A read cycle ended: streams may have freed and outcomes may wait to be delivered.
    func connectionReadCycleEnded(_ connection: any APNSPoolConnection)
    /// The connection closed; what was still in flight is handed over by its fate.
    func connectionClosed(
        _ connection: any APNSPoolConnection,
        wasReady: Bool,
        unprocessed: [APNSQueuedRequest],
        uncertain: [APNSQueuedRequest],
        reason: String
    )
}
