import Crypto
import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeKit
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Provider tokens made the way a provider makes them: ES256 over `header.claims`, the signature
/// in raw `r||s` (JWS) or DER (`openssl dgst -sign`).
enum TestJWT {
    enum SignatureEncoding { case raw, der }

    static func make(
        privateKey: P256.Signing.PrivateKey,
        teamID: String,
        keyID: String,
        issuedAt: Int64,
        encoding: SignatureEncoding = .raw
    ) throws -> String {
        let header = Base64URL.encode(Data("{\"alg\":\"ES256\",\"kid\":\"\(keyID)\"}".utf8))
        let claims = Base64URL.encode(Data("{\"iss\":\"\(teamID)\",\"iat\":\(issuedAt)}".utf8))
        let input = header + "." + claims
        let signature = try privateKey.signature(for: Data(input.utf8))
        let bytes = encoding == .raw ? signature.rawRepresentation : signature.derRepresentation
        return input + "." + Base64URL.encode(bytes)
    }
}

/// A started emulator on port 0 with a manual clock, a demo key and its app, torn down after use.
struct EmulatorFixture {
    static let bundleID = "com.example.marquee"
    static let topic = "com.example.marquee.push-type.liveactivity"

    let emulator: APNSEmulator
    let clock: ManualWallClock
    let key: APNSEmulatorDemoKey

    let tokens = TokenCache()

    /// A valid token signed now by the demo key. ECDSA signatures are randomised, so the same
    /// `iat` and encoding give the same (cached) string, as a provider reuses its token.
    func token(issuedAt: Date? = nil, encoding: TestJWT.SignatureEncoding = .raw) throws -> String {
        let date = issuedAt ?? clock.now
        let seconds = Int64(date.timeIntervalSince1970)
        return try tokens.token(for: "\(seconds)-\(encoding)") {
            try TestJWT.make(
                privateKey: key.privateKey,
                teamID: key.teamID,
                keyID: key.keyID,
                issuedAt: seconds,
                encoding: encoding
            )
        }
    }

    func bearer(issuedAt: Date? = nil, encoding: TestJWT.SignatureEncoding = .raw) throws -> (String, String) {
        ("authorization", "bearer " + (try token(issuedAt: issuedAt, encoding: encoding)))
    }

    /// Headers of a Live Activity device push.
    func liveActivityHeaders(priority: Int = 10) throws -> [(String, String)] {
        [
            try bearer(),
            ("apns-push-type", "liveactivity"),
            ("apns-topic", Self.topic),
            ("apns-priority", String(priority)),
        ]
    }

    /// Connects a client to a listener of the emulator (TLS trusting its CA by default).
    func connect(
        _ kind: APNSEmulatorListener.Kind = .push,
        environment: APNSEnvironment = .sandbox,
        transport: APNSEmulatorListener.Transport = .tls
    ) async throws -> TestHTTP2Client {
        let listener = APNSEmulatorListener(environment: environment, kind: kind, transport: transport)
        guard let url = emulator.url(for: listener) else { throw EmulatorError.notRunning }
        return try await TestHTTP2Client.connect(to: url, caCertificatePEM: emulator.caCertificatePEM)
    }

    /// Starts an emulator (the `observed` profile unless asked otherwise), runs `body`, and shuts it
    /// down whatever happens.
    static func with<Result>(
        profile: APNSEmulatorProfile = .observed,
        _ adjust: (inout APNSEmulatorConfiguration) -> Void = { _ in },
        _ body: (EmulatorFixture) async throws -> Result
    ) async throws -> Result {
        let clock = ManualWallClock(Date(timeIntervalSince1970: 1_767_225_600))
        var configuration = APNSEmulatorConfiguration(profile: profile)
        configuration.clock = clock
        adjust(&configuration)
        let emulator = APNSEmulator(configuration: configuration)
        try await emulator.start()
        do {
            let key = try emulator.makeDemoKey(teamID: "TEAM000001", keyID: "KEY0000001", bundleID: bundleID)
            let result = try await body(EmulatorFixture(emulator: emulator, clock: clock, key: key))
            await emulator.shutdown()
            return result
        } catch {
            await emulator.shutdown()
            throw error
        }
    }
}

/// Live Activity payloads as a provider sends them.
enum Payloads {
    static func start(
        attributesType: String = "MatchAttributes",
        timestamp: Int64,
        channelID: String? = nil,
        inputPushToken: Bool = false,
        staleDate: Int64? = nil
    ) -> String {
        var aps = "\"timestamp\":\(timestamp),\"event\":\"start\",\"attributes-type\":\"\(attributesType)\","
        aps += "\"attributes\":{\"matchId\":\"m1\"},\"content-state\":{\"score\":\"0-0\"},"
        aps += "\"alert\":{\"title\":\"Kick-off\",\"body\":\"Home v Away\"}"
        if let channelID { aps += ",\"input-push-channel\":\"\(channelID)\"" }
        if inputPushToken { aps += ",\"input-push-token\":1" }
        if let staleDate { aps += ",\"stale-date\":\(staleDate)" }
        return "{\"aps\":{\(aps)}}"
    }

    static func update(score: String, timestamp: Int64, staleDate: Int64? = nil) -> String {
        var aps = "\"timestamp\":\(timestamp),\"event\":\"update\",\"content-state\":{\"score\":\"\(score)\"}"
        if let staleDate { aps += ",\"stale-date\":\(staleDate)" }
        return "{\"aps\":{\(aps)}}"
    }

    static func end(score: String, timestamp: Int64, dismissalDate: Int64? = nil) -> String {
        var aps = "\"timestamp\":\(timestamp),\"event\":\"end\",\"content-state\":{\"score\":\"\(score)\"}"
        if let dismissalDate { aps += ",\"dismissal-date\":\(dismissalDate)" }
        return "{\"aps\":{\(aps)}}"
    }
}

extension EmulatorFixture {
    /// Creates a channel through the channel-management API and returns its ID.
    func createChannel(
        policy: Int = 1,
        bundleID: String = EmulatorFixture.bundleID,
        environment: APNSEnvironment = .sandbox
    ) async throws -> String {
        let client = try await connect(.channelManagement, environment: environment)
        defer { Task { await client.close() } }
        let response = try await client.send(
            path: "/1/apps/\(bundleID)/channels",
            headers: [try bearer()],
            body: "{\"message-storage-policy\": \(policy), \"push-type\": \"LiveActivity\"}"
        )
        guard response.status == 201, let id = response.header("apns-channel-id") else {
            throw FixtureError.unexpected(response.status, response.bodyText)
        }
        return id
    }

    /// Sends a Live Activity device push and returns the answer.
    func pushLiveActivity(
        to token: String,
        body: String,
        priority: Int = 10,
        environment: APNSEnvironment = .sandbox
    ) async throws -> TestResponse {
        let client = try await connect(environment: environment)
        defer { Task { await client.close() } }
        return try await client.send(
            path: "/3/device/\(token)",
            headers: try liveActivityHeaders(priority: priority),
            body: body
        )
    }

    /// Broadcasts on a channel and returns the answer.
    func broadcast(
        on channelID: String,
        body: String,
        expiration: String? = "0",
        environment: APNSEnvironment = .sandbox
    ) async throws -> TestResponse {
        let client = try await connect(environment: environment)
        defer { Task { await client.close() } }
        var headers: [(String, String)] = [
            try bearer(), ("apns-push-type", "liveactivity"), ("apns-channel-id", channelID), ("apns-priority", "10"),
        ]
        if let expiration { headers.append(("apns-expiration", expiration)) }
        return try await client.send(path: "/4/broadcasts/apps/\(Self.bundleID)", headers: headers, body: body)
    }

    var nowSeconds: Int64 { Int64(clock.now.timeIntervalSince1970) }

    /// One request to the inspection API: its status and body.
    func inspect(_ method: String, _ path: String, body: String? = nil) async throws -> (Int, Data) {
        guard let base = emulator.inspectionURL, let url = URL(string: base + path) else {
            throw EmulatorError.notRunning
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "content-type")
        }
        let (data, response) = try await URLSession.shared.cancellableData(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}

/// Provider tokens already made, by `iat` and encoding.
final class TokenCache: Sendable {
    private let tokens = Mutex<[String: String]>([:])

    func token(for key: String, make: () throws -> String) rethrows -> String {
        if let token = tokens.withLock({ $0[key] }) { return token }
        let token = try make()
        tokens.withLock { $0[key] = token }
        return token
    }
}

enum FixtureError: Error {
    case unexpected(Int, String)
}
