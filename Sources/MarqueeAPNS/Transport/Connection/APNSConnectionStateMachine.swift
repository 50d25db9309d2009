import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// The decisions of one HTTP/2 connection to APNs, without I/O, so that each rule is testable and
/// `APNSConnectionHandler` only carries them out (as PostgresNIO keeps `PoolStateMachine` apart
/// from `ConnectionPool`).
///
/// It keeps the connection's state, its stream limit (1 until APNs accepted the provider token,
/// then the server's), which token it writes with (`APNSConnectionTokenState`) and the requests in
/// flight. Every request that leaves it leaves with exactly one fate:
///
/// - **answered**: APNs sent a response (accepted or rejected; the pool reads which);
/// - **unprocessed**: provably never processed by APNs, so it may go again without counting an
///   attempt: its stream was above a GOAWAY's last-stream-id, or reset with `REFUSED_STREAM`
///   (RFC 9113 §8.7);
/// - **uncertain**: written, and no answer came: the connection closed or was reset with it in
///   flight, its stream was reset with another code, or it was at or below a GOAWAY's
///   last-stream-id and the connection ended before its answer. APNs may have delivered it.
///
/// What the pool then does (send again or not) is the pool's decision, not this one's.
/// `Request` is generic so that the rules are tested without a pool.
struct APNSConnectionStateMachine<Request> {
    enum State: Equatable {
        /// TCP/TLS up or coming up; the server's first SETTINGS not seen yet.
        case connecting
        case ready
        /// GOAWAY received, token can no longer be used, or stream IDs ran out: finish what is in
        /// flight, open nothing new.
        case draining
        case closed
    }

    struct InFlight {
        var request: Request
        var tokenGeneration: Int
        var response: APNSResponse?
        /// When it was written, for the latency metric and the concurrency limit.
        var sentAt: NIODeadline
        /// Requests in flight on the connection once it was written, itself included.
        var inFlightAtSend: Int
    }

    /// What became of one request that left the connection.
    enum Fate {
        case answered(APNSResponse, tokenGeneration: Int, sentAt: NIODeadline, inFlightAtSend: Int)
        case unprocessed
        case uncertain(reason: String)
    }

    /// One request's fate, and whether the connection should now close (draining, nothing left).
    struct StreamEnd {
        var request: Request
        var fate: Fate
        var closeConnection: Bool
    }

    /// What a GOAWAY changes.
    struct GoAwayEffects {
        /// The streams above its last-stream-id, in stream order: never processed.
        var unprocessed: [Request]
        var closeConnection: Bool
        /// The streams at or below it are still owed answers: close if they do not come in time.
        var scheduleDrainDeadline: Bool
    }

    /// What is left when the connection closed.
    struct Closed {
        /// Whether the server ever completed the handshake; if not, this was a failed attempt.
        var wasReady: Bool
        var unprocessed: [Request]
        var uncertain: [Request]
        /// Why the requests are uncertain, for their error.
        var reason: String
    }

    enum Authorization: Equatable {
        case write(authorization: String)
        /// The connection may not use the current token: it started draining (and closes now if
        /// nothing is in flight). Dispatch must not choose it again.
        case retired(closeConnection: Bool)
    }

    enum PingAction: Equatable {
        case none
        case sendPing
        /// The last PING went unanswered for a whole interval: the connection is dead.
        case close
    }

    private(set) var state = State.connecting
    /// Whether the server ever completed the handshake.
    private(set) var becameReady = false
    /// APNs allows one stream on a token connection until a request with a valid token was accepted.
    private(set) var tokenAccepted = false
    private var tokenState = APNSConnectionTokenState()
    private var inFlight: APNSStreamTable<InFlight>
    private var nextStreamID: Int32 = 1
    /// SETTINGS_MAX_CONCURRENT_STREAMS; HTTP/2 says unlimited until the server names a number.
    private var serverMaxConcurrentStreams = Int.max
    private let maximumStreams: Int
    /// The lowest last-stream-id of the GOAWAYs received: streams above it were never processed.
    private(set) var goAwayLastStreamID: HTTP2StreamID?
    private var drainDeadlineScheduled = false
    private var pingOutstanding = false
    /// Why this side closed the connection, when it did (unanswered PING, drain timeout, shutdown).
    private var closeReason: String?

    init(maximumStreams: Int) {
        self.maximumStreams = max(1, maximumStreams)
        inFlight = APNSStreamTable(minimumCapacity: 4 * self.maximumStreams)
    }

    // MARK: Capacity

    /// The stream limit in force: 1 until a token was accepted, then the server's (capped).
    var effectiveStreamLimit: Int {
        tokenAccepted ? min(serverMaxConcurrentStreams, maximumStreams) : 1
    }

    /// How many more streams may open now.
    var availableStreams: Int {
        guard state == .ready, inFlight.canInsert(HTTP2StreamID(nextStreamID)) else { return 0 }
        return max(0, effectiveStreamLimit - inFlight.count)
    }

    var inFlightCount: Int { inFlight.count }

    // MARK: Handshake and token

    /// The server's SETTINGS; `true` when the connection became ready with them.
    mutating func settingsReceived(maxConcurrentStreams: Int?) -> Bool {
        if let maxConcurrentStreams { serverMaxConcurrentStreams = maxConcurrentStreams }
        guard state == .connecting else { return false }
        state = .ready
        becameReady = true
        return true
    }

    /// The `authorization` for the next writes (see `APNSConnectionTokenState` for the rules).
    mutating func authorization(current: APNSProviderToken, now: Date) -> Authorization {
        switch tokenState.decide(current: current, now: now) {
        case .write(let authorization):
            return .write(authorization: authorization)
        case .retire:
            _ = beginDraining()
            return .retired(closeConnection: shouldCloseNow)
        }
    }

    /// APNs called this connection's token `generation` expired.
    mutating func tokenWasRejected(generation: Int) {
        tokenState.tokenWasRejected(generation: generation)
    }

    // MARK: Writing

    /// Takes a request onto a new stream and returns its ID; `nil` when the connection cannot take
    /// it (not ready, no token adopted yet, or no free slot), and then nothing was written.
    /// `startedDraining` is set when this stream used the last stream ID.
    mutating func open(_ request: Request, sentAt: NIODeadline) -> (streamID: HTTP2StreamID, startedDraining: Bool)? {
        let streamID = HTTP2StreamID(nextStreamID)
        guard state == .ready, let generation = tokenState.generation, inFlight.canInsert(streamID) else { return nil }
        nextStreamID += 2
        inFlight.insert(
            InFlight(
                request: request,
                tokenGeneration: generation,
                response: nil,
                sentAt: sentAt,
                inFlightAtSend: inFlight.count + 1
            ),
            for: streamID
        )
        // Client stream IDs are odd 31-bit numbers; a long-lived connection eventually runs out.
        let startedDraining = nextStreamID >= Int32.max - 2 ? beginDraining() : false
        return (streamID, startedDraining)
    }

    /// Stops new streams; `true` if the connection started draining now. Whether it may close at
    /// once is `shouldCloseNow`.
    mutating func beginDraining() -> Bool {
        guard state == .ready || state == .connecting else { return false }
        state = .draining
        return true
    }

    /// Draining with nothing left in flight.
    var shouldCloseNow: Bool { state == .draining && inFlight.isEmpty }

    // MARK: Stream events

    /// A HEADERS block on `streamID`, decoded into the answer's fields.
    mutating func receivedResponse(_ response: APNSResponse, endStream: Bool, on streamID: HTTP2StreamID) -> StreamEnd?
    {
        guard var entry = inFlight[streamID] else { return nil }
        if entry.response == nil {
            // An interim answer (1xx) is not the response.
            if (100..<200).contains(response.status) && !endStream { return nil }
            entry.response = response
        }
        if endStream { return end(streamID, entry: entry) }
        inFlight[streamID] = entry
        return nil
    }

    /// A DATA frame on `streamID`.
    mutating func receivedData(_ chunk: ByteBuffer, endStream: Bool, on streamID: HTTP2StreamID) -> StreamEnd? {
        guard var entry = inFlight[streamID] else { return nil }
        if entry.response != nil {
            var chunk = chunk
            if entry.response?.body == nil {
                entry.response?.body = chunk
            } else {
                entry.response?.body?.writeBuffer(&chunk)
            }
        }
        if endStream { return end(streamID, entry: entry) }
        inFlight[streamID] = entry
        return nil
    }

    private mutating func end(_ streamID: HTTP2StreamID, entry: InFlight) -> StreamEnd {
        inFlight.remove(streamID)
        guard let response = entry.response else {
            // The stream ended without a status: no answer to read, though APNs saw the request.
            return StreamEnd(
                request: entry.request,
                fate: .uncertain(reason: "the stream ended without a response status"),
                closeConnection: shouldCloseNow
            )
        }
        if !tokenAccepted && response.status != 403 {
            // Any answer other than an authentication failure means APNs took the token.
            tokenAccepted = true
        }
        return StreamEnd(
            request: entry.request,
            fate: .answered(
                response,
                tokenGeneration: entry.tokenGeneration,
                sentAt: entry.sentAt,
                inFlightAtSend: entry.inFlightAtSend
            ),
            closeConnection: shouldCloseNow
        )
    }

    /// RST_STREAM on `streamID`: `REFUSED_STREAM` means the server did not process it (RFC 9113
    /// §8.7), as does a stream above a GOAWAY's last-stream-id; any other code (`INTERNAL_ERROR`,
    /// `CANCEL`, …) leaves it uncertain.
    mutating func receivedReset(_ code: HTTP2ErrorCode, on streamID: HTTP2StreamID) -> StreamEnd? {
        endUnanswered(
            streamID,
            refused: code == .refusedStream,
            reason: "APNs reset the stream (\(code)) before answering"
        )
    }

    /// A stream that ended without an answer: unprocessed if refused or above a GOAWAY's
    /// last-stream-id, uncertain otherwise.
    private mutating func endUnanswered(_ streamID: HTTP2StreamID, refused: Bool, reason: String) -> StreamEnd? {
        guard let entry = inFlight.remove(streamID) else { return nil }
        let fate: Fate = refused || isAboveGoAway(streamID) ? .unprocessed : .uncertain(reason: reason)
        return StreamEnd(request: entry.request, fate: fate, closeConnection: shouldCloseNow)
    }

    /// GOAWAY: the streams above `lastStreamID` were never processed and leave now; those at or
    /// below it are still owed answers; nothing new opens.
    mutating func receivedGoAway(lastStreamID: HTTP2StreamID) -> GoAwayEffects {
        // A later GOAWAY may only lower the number (RFC 9113 §6.8).
        let last = min(lastStreamID, goAwayLastStreamID ?? lastStreamID)
        goAwayLastStreamID = last
        let unprocessed = inFlight.removeAll { $0 > last }.map(\.request)
        if state == .ready || state == .connecting { state = .draining }
        let scheduleDeadline = state == .draining && !inFlight.isEmpty && !drainDeadlineScheduled
        if scheduleDeadline { drainDeadlineScheduled = true }
        return GoAwayEffects(
            unprocessed: unprocessed,
            closeConnection: shouldCloseNow,
            scheduleDrainDeadline: scheduleDeadline
        )
    }

    /// The drain timeout after a GOAWAY passed; `true` if the connection must close now because
    /// streams are still unanswered (they become uncertain when it has closed).
    mutating func drainDeadlinePassed() -> Bool {
        guard state == .draining, !inFlight.isEmpty else { return false }
        closeReason = closeReason ?? "APNs did not answer within the drain timeout after its GOAWAY"
        return true
    }

    // MARK: Liveness

    /// The PING timer fired, the connection silent for `idle` of an `interval`.
    mutating func pingTimerFired(idle: TimeAmount, interval: TimeAmount) -> PingAction {
        guard state != .closed else { return .none }
        if pingOutstanding {
            closeReason = closeReason ?? "the connection stopped answering PINGs"
            return .close
        }
        guard idle >= interval else { return .none }
        pingOutstanding = true
        return .sendPing
    }

    mutating func pingAnswered() {
        pingOutstanding = false
    }

    /// The client closes the connection for its shutdown.
    mutating func closingForShutdown() {
        closeReason = closeReason ?? "the client shut down with the request in flight"
    }

    // MARK: Close

    /// The connection is gone: what is still in flight is unprocessed if a GOAWAY excluded it,
    /// uncertain otherwise.
    mutating func connectionClosed() -> Closed {
        state = .closed
        var unprocessed: [Request] = []
        var uncertain: [Request] = []
        let goAway = goAwayLastStreamID
        for (streamID, entry) in inFlight.removeAllWithIDs() {
            if let goAway, streamID > goAway {
                unprocessed.append(entry.request)
            } else {
                uncertain.append(entry.request)
            }
        }
        return Closed(
            wasReady: becameReady,
            unprocessed: unprocessed,
            uncertain: uncertain,
            reason: closeReason ?? "the connection closed before APNs answered"
        )
    }

    private func isAboveGoAway(_ streamID: HTTP2StreamID) -> Bool {
        guard let goAwayLastStreamID else { return false }
        return streamID > goAwayLastStreamID
    }
}
