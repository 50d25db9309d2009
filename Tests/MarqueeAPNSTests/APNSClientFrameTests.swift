import Foundation
import MarqueeAPNS
import MarqueeCore
import MetricsTestKit
import NIOCore
import NIOHTTP2
import Testing

/// What the client does when APNs stops answering at the frame level, against a scripted HTTP/2
/// server over TLS that counts every request it received: requests APNs provably did not process
/// go again freely, requests it may have processed (uncertain) go again only when a second copy
/// is harmless, never a start or a channel creation.
@Suite("APNs client at the frame level: unprocessed and uncertain requests")
struct APNSClientFrameTests {
    static let bundleID = "com.example.marquee"

    struct Push {
        var push: APNSDevicePush
        var id: UUID
        var apnsID: String { id.uuidString.lowercased() }
    }

    static func push(_ kind: APNSPushKind) throws -> Push {
        let id = UUID()
        let body = ByteBuffer(string: #"{"aps":{"timestamp":1767225600,"event":"\#(kind)","content-state":{}}}"#)
        return Push(
            push: try APNSDevicePush(deviceToken: "abcdef0123456789", bundleID: bundleID, payload: body, apnsID: id),
            id: id
        )
    }

    /// The awaited outcome of one request, as a value.
    static func result<Success>(_ body: () async throws -> Success) async -> Result<Success, APNSError> {
        do {
            return .success(try await body())
        } catch let error as APNSError {
            return .failure(error)
        } catch {
            return .failure(.invalidResponse("not an APNSError: \(error)"))
        }
    }

    static func isUncertain<Success>(_ result: Result<Success, APNSError>) -> Bool {
        if case .failure(.uncertain) = result { return true }
        return false
    }

    /// Runs `body` with a scripted server and a client of it (one connection per endpoint); the
    /// warm-up push is answered first on its own, as APNs allows one stream until the provider
    /// token was accepted.
    static func withServer(
        retryPolicy: APNSRetryPolicy = testRetryPolicy,
        metrics: TestMetrics = TestMetrics(),
        script: @escaping ScriptedAPNSServer.Script,
        _ body: (ScriptedAPNSServer, APNSClient) async throws -> Void
    ) async throws {
        let server = try await ScriptedAPNSServer.start(script: script)
        let client = try server.makeClient(retryPolicy: retryPolicy, metricsFactory: metrics)
        do {
            try await body(server, client)
        } catch {
            await client.shutdown()
            await server.stop()
            throw error
        }
        await client.shutdown()
        await server.stop()
    }

    @Test(
        """
        a connection closed with streams in flight: starts end uncertain and are never sent again; updates and \
        ends are resent
        """
    )
    func connectionClosedInFlight() async throws {
        let warmUp = try Self.push(.update)
        let warmUpID = warmUp.apnsID
        let metrics = TestMetrics()
        try await Self.withServer(
            metrics: metrics,
            script: { connection, request in
                guard connection.index == 1, request.apnsID != warmUpID else { return connection.answer(request) }
                // Two starts, an update and an end in flight, then the connection drops.
                connection.hold(request)
                if connection.held.count == 4 { connection.close() }
            }
        ) { server, client in
            _ = try await client.send(warmUp.push)
            let starts = try [Self.push(.start), Self.push(.start)]
            let update = try Self.push(.update)
            let end = try Self.push(.end)
            async let updated = Self.result { try await client.send(update.push) }
            async let ended = Self.result { try await client.send(end.push) }
            var outcomes: [APNSPushOutcome] = []
            for await chunk in client.send(starts.map(\.push)) { outcomes += chunk }

            #expect(outcomes.count == 2)
            for outcome in outcomes {
                guard case .failure(let error) = outcome.result, case .uncertain = error else {
                    Issue.record("expected an uncertain start, got \(outcome.result)")
                    continue
                }
                #expect(error.failureClass == .uncertain)
            }
            for start in starts { #expect(server.count(start.id) == 1, "a start was sent again") }
            if case .failure(let error) = await updated { Issue.record("the update failed: \(error)") }
            if case .failure(let error) = await ended { Issue.record("the end failed: \(error)") }
            #expect(server.count(update.id) == 2)
            #expect(server.count(end.id) == 2)

            // Counted as their own outcome, neither accepted nor failed.
            func pushes(_ kind: String, _ outcome: String) -> Int64 {
                metrics.counters(
                    label: "marquee_apns_pushes_total",
                    dimensions: [("kind", kind), ("outcome", outcome), ("reason", "none")]
                )
                .reduce(0) { $0 + $1.totalValue }
            }
            #expect(pushes("start", "uncertain") == 2)
            #expect(pushes("start", "failed") == 0)
            #expect(pushes("update", "accepted") == 2)
            #expect(pushes("end", "accepted") == 1)
        }
    }

    @Test(
        """
        GOAWAY below the streams in flight: those above its last-stream-id go again on a new connection without \
        counting an attempt
        """
    )
    func goAwayBelowInFlight() async throws {
        let warmUp = try Self.push(.update)
        let warmUpID = warmUp.apnsID
        // One attempt per request: a resend that counted as an attempt would fail instead.
        let noRetries = APNSRetryPolicy(
            maximumAttempts: 1,
            initialDelay: .milliseconds(5),
            maximumDelay: .milliseconds(5)
        )
        try await Self.withServer(
            retryPolicy: noRetries,
            script: { connection, request in
                guard connection.index == 1, request.apnsID != warmUpID else { return connection.answer(request) }
                connection.hold(request)
                guard connection.held.count == 3 else { return }
                // The server will process only the lowest of the three streams, and answers it.
                let first = connection.held.min { $0.streamID < $1.streamID }!
                connection.goAway(lastStreamID: first.streamID)
                connection.answer(first)
            }
        ) { server, client in
            _ = try await client.send(warmUp.push)
            let starts = try (0..<3).map { _ in try Self.push(.start) }
            var outcomes: [APNSPushOutcome] = []
            for await chunk in client.send(starts.map(\.push)) { outcomes += chunk }

            #expect(outcomes.count == 3)
            for outcome in outcomes {
                if case .failure(let error) = outcome.result { Issue.record("start \(outcome.index) failed: \(error)") }
            }
            let counts = starts.map { server.count($0.id) }.sorted()
            // The processed one once; the two above last-stream-id once on each connection.
            #expect(counts == [1, 2, 2])
            let resent = server.requests.filter { $0.arrival == 2 }
            #expect(resent.count == 2)
            #expect(resent.allSatisfy { $0.connection == 2 })
        }
    }

    @Test(
        """
        GOAWAY above the streams in flight keeps them; when the connection then closes without answers, starts \
        are uncertain
        """
    )
    func goAwayAboveThenClose() async throws {
        let warmUp = try Self.push(.update)
        let warmUpID = warmUp.apnsID
        try await Self.withServer(script: { connection, request in
            guard connection.index == 1, request.apnsID != warmUpID else { return connection.answer(request) }
            connection.hold(request)
            if connection.held.count == 3 { connection.goAway(lastStreamID: .maxID, thenClose: true) }
        }) { server, client in
            _ = try await client.send(warmUp.push)
            let starts = try [Self.push(.start), Self.push(.start)]
            let update = try Self.push(.update)
            async let updated = Self.result { try await client.send(update.push) }
            var outcomes: [APNSPushOutcome] = []
            for await chunk in client.send(starts.map(\.push)) { outcomes += chunk }

            #expect(outcomes.count == 2)
            for outcome in outcomes {
                if case .failure(.uncertain) = outcome.result { continue }
                Issue.record("expected an uncertain start, got \(outcome.result)")
            }
            for start in starts { #expect(server.count(start.id) == 1, "a start was sent again") }
            if case .failure(let error) = await updated { Issue.record("the update failed: \(error)") }
            #expect(server.count(update.id) == 2)
        }
    }

    @Test("RST_STREAM with REFUSED_STREAM: the start goes again, without counting an attempt")
    func refusedStream() async throws {
        let noRetries = APNSRetryPolicy(
            maximumAttempts: 1,
            initialDelay: .milliseconds(5),
            maximumDelay: .milliseconds(5)
        )
        let start = try Self.push(.start)
        let startID = start.apnsID
        try await Self.withServer(
            retryPolicy: noRetries,
            script: { connection, request in
                if request.apnsID == startID && request.arrival == 1 {
                    connection.reset(request, code: .refusedStream)
                } else {
                    connection.answer(request)
                }
            }
        ) { server, client in
            _ = try await client.send(try Self.push(.update).push)
            _ = try await client.send(start.push)
            #expect(server.count(start.id) == 2)
        }
    }

    @Test(
        "RST_STREAM with another code: the start is uncertain and not sent again; an update is",
        arguments: [HTTP2ErrorCode.internalError, .cancel]
    )
    func otherReset(code: HTTP2ErrorCode) async throws {
        let warmUp = try Self.push(.update)
        let warmUpID = warmUp.apnsID
        try await Self.withServer(script: { connection, request in
            if request.apnsID != warmUpID && request.arrival == 1 {
                connection.reset(request, code: code)
            } else {
                connection.answer(request)
            }
        }) { server, client in
            _ = try await client.send(warmUp.push)
            let start = try Self.push(.start)
            let update = try Self.push(.update)
            let started = await Self.result { try await client.send(start.push) }
            #expect(Self.isUncertain(started))
            #expect(server.count(start.id) == 1)
            let updated = await Self.result { try await client.send(update.push) }
            if case .failure(let error) = updated { Issue.record("the update failed: \(error)") }
            #expect(server.count(update.id) == 2)
        }
    }

    @Test("a channel creation left uncertain is not sent again (APNs would create a second channel); a deletion is")
    func channelManagement() async throws {
        let warmUpID = UUID()
        let warmUpText = warmUpID.uuidString.lowercased()
        try await Self.withServer(script: { connection, request in
            guard connection.index == 1, request.apnsID != warmUpText else {
                return connection.answer(request, status: 204)
            }
            connection.hold(request)
            if connection.held.count == 2 { connection.close() }
        }) { server, client in
            try await client.deleteChannel(bundleID: Self.bundleID, channelID: "dHN0LTEyMzQ=", requestID: warmUpID)
            let createID = UUID()
            let deleteID = UUID()
            async let deleted = Self.result {
                try await client.deleteChannel(bundleID: Self.bundleID, channelID: "dHN0LTU2Nzg=", requestID: deleteID)
            }
            let created = await Self.result {
                try await client.createChannel(
                    bundleID: Self.bundleID,
                    storagePolicy: .noMessageStored,
                    requestID: createID
                )
            }
            #expect(Self.isUncertain(created))
            #expect(server.count(createID) == 1)
            if case .failure(let error) = await deleted { Issue.record("the deletion failed: \(error)") }
            #expect(server.count(deleteID) == 2)
        }
    }
}
