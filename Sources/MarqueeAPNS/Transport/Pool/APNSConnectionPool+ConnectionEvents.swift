import Logging
import NIOCore

/// What the pool's connections report (`APNSConnectionDelegate`), on the pool's event loop: each
/// event goes to the state machine, and the pool carries out what it answers.
extension APNSConnectionPool {
    func connectionBecameReady(_ connection: any APNSPoolConnection) {
        machine.connectionBecameReady()
        logger.debug("APNs connection ready", metadata: ["apns.connection": "\(connection.connectionID)"])
        dispatch()
    }

    func connectionStartedDraining(_ connection: any APNSPoolConnection) {
        // Its replacement is opened by the next dispatch if requests are waiting.
        if machine.hasQueuedRequests { eventLoop.execute { [self] in dispatch() } }
    }

    func connectionReadCycleEnded(_ connection: any APNSPoolConnection) {
        // Send what freed streams allow and deliver outcomes.
        dispatch()
        flushSinks()
    }

    func connectionClosed(
        _ connection: any APNSPoolConnection,
        wasReady: Bool,
        unprocessed: [APNSQueuedRequest],
        uncertain: [APNSQueuedRequest],
        reason: String
    ) {
        connections.removeAll { $0 === connection }
        logger.debug(
            "APNs connection closed",
            metadata: [
                "apns.connection": "\(connection.connectionID)", "apns.unprocessed": "\(unprocessed.count)",
                "apns.uncertain": "\(uncertain.count)",
            ]
        )
        let description = unreachable("the connection closed during the handshake")
        let batchesWaiting = !sources.isEmpty
        carryOut(machine.connectionClosed(wasReady: wasReady, description: description, batchesWaiting: batchesWaiting))
        for completion in machine.requeueUnprocessed(unprocessed) { deliver(completion) }
        for request in uncertain {
            carryOut(machine.leftUncertain(request, reason: reason))
        }
        dispatch()
        // Dispatch delivers nothing once the pool is shut down; the outcomes of this close must
        // still reach their callers.
        flushSinks()
    }

    func connection(_ connection: any APNSPoolConnection, didNotProcess requests: [APNSQueuedRequest]) {
        for completion in machine.requeueUnprocessed(requests) { deliver(completion) }
    }

    func connection(_ connection: any APNSPoolConnection, leftUncertain request: APNSQueuedRequest, reason: String) {
        carryOut(machine.leftUncertain(request, reason: reason))
    }

    func connection(
        _ connection: any APNSPoolConnection,
        answered request: APNSQueuedRequest,
        response: APNSResponse,
        tokenGeneration: Int
    ) {
        let generation: Int
        switch machine.answered(request, response: response, tokenGeneration: tokenGeneration) {
        case .outcome(let outcome):
            carryOut(outcome)
            return
        case .renewTokenAndRetry(let rejectedGeneration):
            generation = rejectedGeneration
        }
        logger.debug(
            "APNs called the provider token expired; renewing it once",
            metadata: ["apns.token_generation": "\(generation)"]
        )
        do {
            try tokenCache.renew(rejectedGeneration: generation)
        } catch {
            deliver(machine.finish(request, result: .failure(error)))
            return
        }
        connection.tokenWasRejected(generation: generation)
        machine.retryWithRenewedToken(request)
    }
}
