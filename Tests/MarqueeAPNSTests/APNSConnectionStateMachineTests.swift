import Crypto
import Foundation
import MarqueeCore
import NIOCore
import NIOHTTP2
import Testing

@testable import MarqueeAPNS

/// The connection's decisions without a connection: what becomes of each request in flight when a
/// stream or the whole connection ends.
@Suite("Connection state machine")
struct APNSConnectionStateMachineTests {
    typealias Machine = APNSConnectionStateMachine<String>

    let key = APNSSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
    let now = Date(timeIntervalSince1970: 1_767_225_600)

    /// A ready machine whose token APNs accepted (the warm-up request on stream 1 answered 200),
    /// with `requests` in flight on streams 3, 5, 7, …
    func readyMachine(inFlight requests: [String], maximumStreams: Int = 100) throws -> Machine {
        var machine = Machine(maximumStreams: maximumStreams)
        let ready = machine.settingsReceived(maxConcurrentStreams: 100)
        #expect(ready)
        let token = try APNSProviderToken(signingKey: key, issuedAt: now, generation: 1)
        guard case .write = machine.authorization(current: token, now: now) else {
            Issue.record("a fresh connection must write with the current token")
            return machine
        }
        let warmUpStream = machine.open("warm-up", sentAt: .now())
        let warmUp = try #require(warmUpStream)
        #expect(warmUp.streamID == 1)
        let answer = machine.receivedResponse(APNSResponse.status(200), endStream: true, on: 1)
        #expect(answer?.request == "warm-up")
        for request in requests {
            let opened = machine.open(request, sentAt: .now())
            _ = try #require(opened)
        }
        return machine
    }

    static func isUncertain(_ fate: Machine.Fate?) -> Bool {
        if case .uncertain = fate { return true }
        return false
    }

    static func isUnprocessed(_ fate: Machine.Fate?) -> Bool {
        if case .unprocessed = fate { return true }
        return false
    }

    @Test("a connection opens one stream until APNs accepted the token, then the server's limit")
    func streamLimit() throws {
        var machine = Machine(maximumStreams: 1000)
        #expect(machine.availableStreams == 0)
        let ready = machine.settingsReceived(maxConcurrentStreams: 500)
        #expect(ready)
        #expect(machine.state == .ready)
        #expect(machine.availableStreams == 1)
        let token = try APNSProviderToken(signingKey: key, issuedAt: now, generation: 1)
        _ = machine.authorization(current: token, now: now)
        let first = machine.open("first", sentAt: .now())
        _ = try #require(first)
        #expect(machine.availableStreams == 0)
        // A 403 is no acceptance of the token.
        _ = machine.receivedResponse(APNSResponse.status(403), endStream: true, on: 1)
        #expect(!machine.tokenAccepted)
        let second = machine.open("second", sentAt: .now())
        _ = try #require(second)
        _ = machine.receivedResponse(APNSResponse.status(400), endStream: true, on: 3)
        #expect(machine.tokenAccepted)
        #expect(machine.availableStreams == 500)
    }

    @Test("an answer completes its request with the response, headers and body")
    func answered() throws {
        var machine = try readyMachine(inFlight: ["a"])
        let interim = machine.receivedResponse(APNSResponse.status(400), endStream: false, on: 3)
        #expect(interim == nil)
        let end = machine.receivedData(ByteBuffer(string: #"{"reason":"BadDeviceToken"}"#), endStream: true, on: 3)
        guard case .answered(let response, let generation, _, _) = end?.fate else {
            Issue.record("expected an answer, got \(String(describing: end?.fate))")
            return
        }
        #expect(end?.request == "a")
        #expect(generation == 1)
        #expect(response.rejection.reason == .badDeviceToken)
        #expect(machine.inFlightCount == 0)
    }

    @Test("RST_STREAM with REFUSED_STREAM: the request was not processed")
    func refusedStream() throws {
        var machine = try readyMachine(inFlight: ["a", "b"])
        let end = machine.receivedReset(.refusedStream, on: 5)
        #expect(end?.request == "b")
        #expect(Self.isUnprocessed(end?.fate))
        #expect(machine.inFlightCount == 1)
    }

    @Test(
        "RST_STREAM with any other code: the request is uncertain",
        arguments: [HTTP2ErrorCode.internalError, .cancel, .protocolError]
    )
    func otherReset(code: HTTP2ErrorCode) throws {
        var machine = try readyMachine(inFlight: ["a"])
        let end = machine.receivedReset(code, on: 3)
        #expect(end?.request == "a")
        #expect(Self.isUncertain(end?.fate))
    }

    @Test("GOAWAY below the streams in flight: those above its last-stream-id leave unprocessed, in order")
    func goAwayBelow() throws {
        var machine = try readyMachine(inFlight: ["a", "b", "c"])  // streams 3, 5, 7
        let effects = machine.receivedGoAway(lastStreamID: 3)
        #expect(effects.unprocessed == ["b", "c"])
        #expect(machine.state == .draining)
        #expect(machine.availableStreams == 0)
        #expect(!effects.closeConnection)
        #expect(effects.scheduleDrainDeadline)
        // Stream 3 is still owed its answer; with it the drained connection closes.
        let end = machine.receivedResponse(APNSResponse.status(200), endStream: true, on: 3)
        #expect(end?.request == "a")
        #expect(end?.closeConnection == true)
    }

    @Test("GOAWAY above the streams in flight keeps them; a close without answers leaves them uncertain")
    func goAwayAboveThenClose() throws {
        var machine = try readyMachine(inFlight: ["a", "b"])
        let effects = machine.receivedGoAway(lastStreamID: HTTP2StreamID(Int32.max))
        #expect(effects.unprocessed.isEmpty)
        #expect(machine.inFlightCount == 2)
        let closed = machine.connectionClosed()
        #expect(closed.uncertain == ["a", "b"])
        #expect(closed.unprocessed.isEmpty)
        #expect(closed.wasReady)
        #expect(machine.state == .closed)
    }

    @Test("a second GOAWAY can only lower the last-stream-id")
    func secondGoAway() throws {
        var machine = try readyMachine(inFlight: ["a", "b", "c"])
        let goAway5 = machine.receivedGoAway(lastStreamID: 5)
        #expect(goAway5.unprocessed == ["c"])
        let goAway7 = machine.receivedGoAway(lastStreamID: 7)
        #expect(goAway7.unprocessed.isEmpty)
        #expect(machine.goAwayLastStreamID == 5)
        let goAway3 = machine.receivedGoAway(lastStreamID: 3)
        #expect(goAway3.unprocessed == ["b"])
    }

    @Test("a connection that closes with streams in flight leaves every one uncertain")
    func closedInFlight() throws {
        var machine = try readyMachine(inFlight: ["a", "b", "c"])
        let closed = machine.connectionClosed()
        #expect(closed.uncertain == ["a", "b", "c"])
        #expect(closed.unprocessed.isEmpty)
    }

    @Test("the drain deadline closes a connection whose covered streams were never answered, and says why")
    func drainDeadline() throws {
        var machine = try readyMachine(inFlight: ["a", "b"])
        _ = machine.receivedGoAway(lastStreamID: 5)
        let mustClose = machine.drainDeadlinePassed()
        #expect(mustClose)
        let closed = machine.connectionClosed()
        #expect(closed.uncertain == ["a", "b"])
        #expect(closed.reason.contains("drain timeout"))
    }

    @Test("a drained connection owes nothing: the deadline does not close it twice")
    func drainDeadlineAfterAnswers() throws {
        var machine = try readyMachine(inFlight: ["a"])
        let effects = machine.receivedGoAway(lastStreamID: 1)
        #expect(effects.unprocessed == ["a"])
        #expect(effects.closeConnection)
        #expect(!effects.scheduleDrainDeadline)
        let mustClose = machine.drainDeadlinePassed()
        #expect(!mustClose)
    }

    @Test("a PING unanswered for an interval closes the connection; what is in flight is uncertain")
    func pingTimeout() throws {
        var machine = try readyMachine(inFlight: ["a"])
        let quiet = machine.pingTimerFired(idle: .seconds(1), interval: .seconds(60))
        #expect(quiet == .none)
        let idle = machine.pingTimerFired(idle: .seconds(60), interval: .seconds(60))
        #expect(idle == .sendPing)
        let unanswered = machine.pingTimerFired(idle: .seconds(120), interval: .seconds(60))
        #expect(unanswered == .close)
        let closed = machine.connectionClosed()
        #expect(closed.uncertain == ["a"])
        #expect(closed.reason.contains("PING"))
    }

    @Test("a connection that closes before its SETTINGS was never ready: a failed attempt, nothing in flight")
    func closedDuringHandshake() {
        var machine = Machine(maximumStreams: 10)
        let opened = machine.open("a", sentAt: .now())
        #expect(opened == nil)
        let closed = machine.connectionClosed()
        #expect(!closed.wasReady)
        #expect(closed.uncertain.isEmpty && closed.unprocessed.isEmpty)
    }

    @Test("a retired token drains the connection; with nothing in flight it closes at once")
    func retiredToken() throws {
        var machine = try readyMachine(inFlight: [])
        machine.tokenWasRejected(generation: 1)
        let same = try APNSProviderToken(signingKey: key, issuedAt: now, generation: 1)
        let decision = machine.authorization(current: same, now: now.addingTimeInterval(60))
        #expect(decision == .retired(closeConnection: true))
        #expect(machine.state == .draining)
        #expect(machine.availableStreams == 0)
    }
}
