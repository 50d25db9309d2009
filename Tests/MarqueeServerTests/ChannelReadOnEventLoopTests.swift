import Foundation
import HTTPTypes
import Logging
import MarqueeCore
import MarqueeTesting
import NIOCore
import NIOHTTPTypes
import Testing

@testable import MarqueeServer

/// The channel-ID read whose answer is in memory is answered on the connection's event loop,
/// before Hummingbird (`EventLoopAnswerHandler`): its answer is Hummingbird's, and answers
/// leave in the order their requests came.
@Suite("Channel-ID reads answered on the event loop")
struct ChannelReadOnEventLoopTests {
    static let read = "/v1/events/derby/channels/sandbox"
    /// The same read with its key percent-encoded: the contract decodes it to the same event, and
    /// only Hummingbird answers it.
    static let throughHummingbird = "/v1/events/%64erby/channels/sandbox"

    @Test(
        "a remembered read is answered as Hummingbird answers it: status, headers and body; 304 alike",
        arguments: TestBackend.allCases
    )
    func sameAnswer(backend: TestBackend) async throws {
        let recorder = FlightRecorder(capacity: 10_000)
        // A clock that stands still: the key is remembered for `auth.cacheSeconds` of the server's
        // clock, and on a busy machine the wall's seconds between the reads could outlast it (the
        // 304 then goes through Hummingbird, correctly, and is not counted here).
        try await TestServer.run(backend, clock: ManualWallClock(), logger: recorder.logger(level: .debug)) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "derby").status == 201)
            // Else a late notification of the app's or the event's creation could forget the key
            // or the answer in between.
            try await server.settleNotifications(loggedIn: recorder)
            let hummingbird = try await server.client.send("GET", Self.throughHummingbird, key: app.appKey)
            let eventLoop = try await server.client.send(
                "GET",
                Self.read,
                key: app.appKey,
                headers: ["X-Request-ID": "read-1"]
            )
            #expect(hummingbird.status == 200, "\(hummingbird.text)")
            #expect(eventLoop.status == 200, "\(eventLoop.text)")
            #expect(eventLoop.text == hummingbird.text)
            Self.expectSameHeaders(eventLoop, hummingbird)
            #expect(eventLoop.header("X-Request-ID") == "read-1")

            let tag = try #require(eventLoop.header("ETag"))
            let unchanged = ["If-None-Match": tag]
            let hummingbird304 = try await server.client.send(
                "GET",
                Self.throughHummingbird,
                key: app.appKey,
                headers: unchanged
            )
            let eventLoop304 = try await server.client.send("GET", Self.read, key: app.appKey, headers: unchanged)
            #expect(hummingbird304.status == 304)
            #expect(eventLoop304.status == 304)
            #expect(eventLoop304.body.isEmpty)
            Self.expectSameHeaders(eventLoop304, hummingbird304)

            // Counted as every answer is.
            let scrape = try await server.scrapeMetrics()
            let route = ChannelReadAnswer.route
            #expect(
                scrape.value("marquee_http_requests_total", ["method": "GET", "route": route, "status": "200"]) == 2
            )
            #expect(
                scrape.value("marquee_http_requests_total", ["method": "GET", "route": route, "status": "304"]) == 2
            )
        }
        let answeredHere = recorder.lines.filter { $0.contains("on the event loop") }
        #expect(answeredHere.count == 2, "the plain reads, and only those: \(answeredHere)")
    }

    @Test(
        "pipelined behind a registration, remembered reads are answered after it, in order",
        arguments: TestBackend.allCases
    )
    func pipelinedInOrder(backend: TestBackend) async throws {
        let recorder = FlightRecorder(capacity: 10_000)
        try await TestServer.run(backend, logger: recorder.logger(level: .debug)) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "derby").status == 201)
            // The reads below are the remembered kind only if no late notification forgets the
            // key or the answer after this first read.
            try await server.settleNotifications(loggedIn: recorder)
            #expect(try await server.client.send("GET", Self.read, key: app.appKey).status == 200)
            let body = #"{"environment":"sandbox","attributesType":"MatchAttributes"}"#
            let registration =
                "PUT /v1/push-to-start-tokens/\(String(repeating: "ab", count: 32)) HTTP/1.1\r\nHost: marquee\r\n"
                + "Authorization: Bearer \(app.appKey)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            let read = "GET \(Self.read) HTTP/1.1\r\nHost: marquee\r\nAuthorization: Bearer \(app.appKey)\r\n\r\n"
            let reading = try await RawHTTPConnection.with(server.client.baseURL) { inbound, outbound in
                try await outbound.send(read + registration + read + read)
                return try await RawHTTPConnection.read(inbound) { bytes in
                    Self.answers(in: String(decoding: bytes, as: UTF8.self)).count == 4
                }
            }
            let answers = Self.answers(in: reading.text)
            #expect(answers.count == 4, "\(reading.text)")
            #expect(answers.allSatisfy { $0.hasPrefix("HTTP/1.1 200") }, "\(reading.text)")
            #expect(answers.map { $0.contains("\"channelID\"") } == [true, false, true, true], "\(reading.text)")
            #expect(answers[1].contains("\"attributesType\""), "\(answers[1])")
        }
    }

    /// The whole answers in `text`: each a head and a body of its `Content-Length`.
    static func answers(in text: String) -> [String] {
        var answers: [String] = []
        var rest = Substring(text)
        while let headEnd = rest.range(of: "\r\n\r\n") {
            let head = rest[..<headEnd.lowerBound]
            let length =
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            let bodyStart = headEnd.upperBound
            guard rest.utf8.distance(from: bodyStart, to: rest.endIndex) >= length else { break }
            let bodyEnd = rest.utf8.index(bodyStart, offsetBy: length)
            answers.append(String(rest[..<bodyEnd]))
            rest = rest[bodyEnd...]
        }
        return answers
    }

    static func expectSameHeaders(
        _ eventLoop: TestHTTPClient.Response,
        _ hummingbird: TestHTTPClient.Response,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let names = { (response: TestHTTPClient.Response) in Set(response.headers.keys.map { $0.lowercased() }) }
        #expect(names(eventLoop) == names(hummingbird), sourceLocation: sourceLocation)
        for name in ["ETag", "Cache-Control", "Content-Type", "Content-Length", "Server"] {
            #expect(eventLoop.header(name) == hummingbird.header(name), "\(name)", sourceLocation: sourceLocation)
        }
        #expect(eventLoop.header("Date") != nil, sourceLocation: sourceLocation)
    }
}

/// `EventLoopAnswerHandler.StateMachine`: which requests the handler answers itself, so that
/// answers leave in the order their requests came.
@Suite("Answers on the event loop: the order of answers")
struct EventLoopAnswerOrderTests {
    typealias Machine = EventLoopAnswerHandler.StateMachine
    let read = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/events/a/channels/sandbox")
    let registration = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/v1/push-to-start-tokens/ab")
    let other = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v1/events/a/broadcasts")
    let withBody = Machine.Kind.withBody(bodyLimit: 8)

    @Test("a read with nothing owed is held until its end and answered; the next is held again")
    func answeredInTurn() {
        var machine = Machine()
        #expect(machine.head(read, kind: .withoutBody) == .hold)
        #expect(machine.end(nil) == .answer(read, .withoutBody))
        machine.answered()
        #expect(machine.head(read, kind: .withoutBody) == .hold)
        #expect(machine.answersOwed == 0)
    }

    @Test("behind a request passed on, a read is passed on too, until that answer's end is written")
    func behindAnAnswerOwed() {
        var machine = Machine()
        #expect(machine.head(other, kind: nil) == .pass)
        #expect(machine.body(ByteBuffer(string: "{}")) == .pass)
        #expect(machine.end(nil) == .pass)
        #expect(machine.head(read, kind: .withoutBody) == .pass)
        #expect(machine.end(nil) == .pass)
        #expect(machine.answersOwed == 2)
        machine.passedOnAnswerWritten()
        #expect(machine.head(read, kind: .withoutBody) == .pass, "one answer still owed")
        #expect(machine.end(nil) == .pass)
        machine.passedOnAnswerWritten()
        machine.passedOnAnswerWritten()
        #expect(machine.head(read, kind: .withoutBody) == .hold)
    }

    @Test("a held read with a body, or without an answer in memory, goes on whole, head first")
    func heldThenPassedOn() {
        var machine = Machine()
        #expect(machine.head(read, kind: .withoutBody) == .hold)
        #expect(machine.body(ByteBuffer(string: "x")) == .passHeld(read))
        #expect(machine.body(ByteBuffer(string: "y")) == .pass)
        #expect(machine.end(nil) == .pass)
        #expect(machine.answersOwed == 1)
        machine.passedOnAnswerWritten()

        #expect(machine.head(read, kind: .withoutBody) == .hold)
        #expect(machine.end(nil) == .answer(read, .withoutBody))
        machine.passedOn()
        #expect(machine.answersOwed == 1)
        #expect(machine.head(read, kind: .withoutBody) == .pass)
    }

    @Test("a registration's body is kept up to its limit; past it the registration goes on whole")
    func registrationBody() {
        var machine = Machine()
        #expect(machine.head(registration, kind: withBody) == .hold)
        #expect(machine.body(ByteBuffer(string: "{\"a\":")) == .keep)
        #expect(machine.body(ByteBuffer(string: "1}")) == .keep)
        #expect(machine.end(nil) == .answer(registration, withBody))
        machine.answered()

        #expect(machine.head(registration, kind: withBody) == .hold)
        #expect(machine.body(ByteBuffer(string: "{\"a\":")) == .keep)
        #expect(machine.body(ByteBuffer(string: "\"long\"}")) == .passHeld(registration))
        #expect(machine.end(nil) == .pass)
        #expect(machine.answersOwed == 1)
    }

    @Test(
        """
        while a registration's answer is on its way, what arrives after it waits, in order, and so do a quiesce \
        and, once something waits, reads of the socket; then it is handled again
        """
    )
    func waitingForAnAnswerOnItsWay() {
        var machine = Machine()
        #expect(machine.head(registration, kind: withBody) == .hold)
        #expect(machine.end(nil) == .answer(registration, withBody))
        machine.answering()
        let readWithNothingWaiting = machine.read()
        #expect(readWithNothingWaiting, "a client that waits for its answer is read as usual")
        let body = ByteBuffer(string: "{}")
        #expect(machine.head(other, kind: nil) == .wait)
        #expect(machine.body(body) == .wait)
        #expect(machine.end(nil) == .wait)
        #expect(machine.head(read, kind: .withoutBody) == .wait)
        let readNow = machine.read()
        #expect(!readNow)
        #expect(machine.quiesce() == .hold)
        #expect(machine.answersOwed == 0)

        let resumption = machine.answerWritten()
        #expect(resumption.waiting == [.head(other), .body(body), .end(nil), .head(read)])
        #expect(resumption.passQuiesce)
        #expect(resumption.read)
        let readAfter = machine.read()
        #expect(readAfter)
        // Handled again: after the quiesce, everything goes on to Hummingbird.
        #expect(machine.head(other, kind: nil) == .pass)
        #expect(machine.end(nil) == .pass)
        #expect(machine.head(read, kind: .withoutBody) == .pass)
    }

    @Test("once the server quiesces, a held read goes on, and so does every request after it")
    func quiescing() {
        var machine = Machine()
        #expect(machine.head(read, kind: .withoutBody) == .hold)
        #expect(machine.quiesce() == .pass(heldHead: read))
        #expect(machine.end(nil) == .pass)
        machine.passedOnAnswerWritten()
        #expect(machine.head(read, kind: .withoutBody) == .pass)
    }
}
