import Crypto
import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEngine
import NIOCore
import Synchronization

/// APNs for one environment, in memory: what an engine test puts in place of `APNSClient` (through
/// `APNSClientRegistry`'s client factory). Each device token and channel answers as the test
/// scripted it (accepted by default), every request is recorded as sent, and channel management
/// keeps a table of the channels it made. Pushes can be held back (`holdPushes`) so that a test
/// acts while a fan-out has sends in flight.
public final class FakeAPNS: APNSGateway {
    /// How APNs answers one request.
    public enum Answer: Sendable, Hashable {
        case accepted
        /// 410 `Unregistered`, APNs having last seen the token invalid at `since`.
        case gone(since: Date)
        /// An error status with its reason (400 `BadDeviceToken`, 403 `TopicDisallowed`, …).
        case rejected(status: Int, reason: APNSErrorReason)
        /// 429 `TooManyRequests`.
        case tooManyRequests
        /// 500 `InternalServerError`.
        case serverError
        /// The connection was lost after the request was written: it may have arrived.
        case lostAfterWrite

        var error: APNSError? {
            switch self {
            case .accepted: nil
            case .gone(let since):
                .rejected(
                    APNSRejection(
                        status: 410,
                        reason: .unregistered,
                        timestampMilliseconds: Int64(since.timeIntervalSince1970 * 1000)
                    )
                )
            case .rejected(let status, let reason): .rejected(APNSRejection(status: status, reason: reason))
            case .tooManyRequests: .rejected(APNSRejection(status: 429, reason: .tooManyRequests))
            case .serverError: .rejected(APNSRejection(status: 500, reason: .internalServerError))
            case .lostAfterWrite: .uncertain("the fake connection closed with the request written")
            }
        }
    }

    /// A device push as APNs received it.
    public struct SentPush: Sendable {
        public var token: String
        public var topic: String
        public var priority: APNSPriority
        public var collapseID: String?
        public var kind: APNSPushKind
        public var payload: Data
        public var answer: Answer

        /// The body's `aps` dictionary.
        public var aps: [String: Any] { FakeAPNS.aps(of: payload) }
    }

    /// A broadcast as APNs received it.
    public struct SentBroadcast: Sendable {
        public var channelID: String
        public var priority: APNSPriority
        public var expiration: APNSExpiration?
        public var payload: Data
        public var answer: Answer

        public var aps: [String: Any] { FakeAPNS.aps(of: payload) }
    }

    /// A channel management call.
    public enum ChannelOperation: Sendable, Hashable {
        case create, read, list, delete
    }

    struct State {
        var tokenAnswers: [String: [Answer]] = [:]
        var channelAnswers: [String: [Answer]] = [:]
        var operationFailures: [ChannelOperation: [APNSError]] = [:]
        var pushes: [SentPush] = []
        var broadcasts: [SentBroadcast] = []
        var channels: [String: MessageStoragePolicy] = [:]
        var channelCalls: [ChannelOperation] = []
        var createRequestIDs: [UUID] = []
        /// Pushes are held once this many were sent.
        var holdFrom: Int?
        var held: [CheckedContinuation<Void, Never>] = []
        var shutdowns = 0
    }

    public let environment: APNSEnvironment
    let state = Mutex(State())

    public init(environment: APNSEnvironment) {
        self.environment = environment
    }

    // MARK: Scripting

    /// The next answers to pushes for `token`, one per push, then `accepted`.
    public func script(token: String, _ answers: Answer...) {
        state.withLock { $0.tokenAnswers[token.lowercased(), default: []] += answers }
    }

    /// The next answers to broadcasts on `channelID`, one per broadcast, then `accepted`.
    public func script(channel channelID: String, _ answers: Answer...) {
        state.withLock { $0.channelAnswers[channelID, default: []] += answers }
    }

    /// The next `operation` calls fail with `errors`, one per call, then work again.
    public func fail(_ operation: ChannelOperation, with errors: APNSError...) {
        state.withLock { $0.operationFailures[operation, default: []] += errors }
    }

    /// A channel APNs has that Marquee did not create (made in the console, or by a lost answer).
    public func addChannel(_ channelID: String, storagePolicy: MessageStoragePolicy = .mostRecentMessageStored) {
        state.withLock { $0.channels[channelID] = storagePolicy }
    }

    /// A channel APNs no longer has (deleted in the console).
    public func removeChannel(_ channelID: String) {
        state.withLock { $0.channels[channelID] = nil }
    }

    /// Pushes after the next `count` wait unanswered (unwritten: the first of them counts as
    /// written once released) until `releasePushes`.
    public func holdPushes(after count: Int = 0) {
        state.withLock { $0.holdFrom = $0.pushes.count + count }
    }

    public func releasePushes() {
        let waiting = state.withLock { state in
            state.holdFrom = nil
            defer { state.held.removeAll() }
            return state.held
        }
        for continuation in waiting { continuation.resume() }
    }

    // MARK: What was sent

    public var pushes: [SentPush] { state.withLock { $0.pushes } }
    public var broadcasts: [SentBroadcast] { state.withLock { $0.broadcasts } }
    /// The channels APNs has now.
    public var channels: [String: MessageStoragePolicy] { state.withLock { $0.channels } }
    public var channelCalls: [ChannelOperation] { state.withLock { $0.channelCalls } }
    /// The request ID of every creation asked.
    public var createRequestIDs: [UUID] { state.withLock { $0.createRequestIDs } }
    /// Pushes waiting for `releasePushes`.
    public var heldPushes: Int { state.withLock { $0.held.count } }
    public var shutdowns: Int { state.withLock { $0.shutdowns } }

    /// A fresh .p8 private key as PEM, for an app's signing key (the fake checks no signature).
    public static func signingKeyPEM() -> String {
        P256.Signing.PrivateKey().pemRepresentation
    }

    static func aps(of payload: Data) -> [String: Any] {
        let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        return object?["aps"] as? [String: Any] ?? [:]
    }

    /// How many pushes each token received.
    public var pushCounts: [String: Int] {
        pushes.reduce(into: [:]) { $0[$1.token, default: 0] += 1 }
    }
}
