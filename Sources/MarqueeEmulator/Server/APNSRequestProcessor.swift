import Foundation
import MarqueeCore
import Synchronization

/// Answers one request as APNs would, for one listener. Runs on the connection's event loop and
/// touches shared state only through ``EmulatorState``'s short critical sections.
struct APNSRequestProcessor: Sendable {
    let state: EmulatorState
    let listener: APNSEmulatorListener

    private var configuration: APNSEmulatorConfiguration { state.configuration }
    private var environment: APNSEnvironment { listener.environment }

    /// The headers whose repetition APNs answers with `DuplicateHeaders`.
    static let singletonHeaders: Set<String> = [
        "authorization", "apns-id", "apns-request-id", "apns-push-type", "apns-topic", "apns-priority",
        "apns-expiration", "apns-collapse-id", "apns-channel-id",
    ]

    func process(_ request: EmulatorRequest, authenticator: inout ConnectionAuthenticator) -> EmulatorResponse {
        switch listener.kind {
        case .push:
            if request.path.hasPrefix("/3/device") {
                return DevicePushExchange(processor: self, request: request).respond(authenticator: &authenticator)
            }
            if request.path.hasPrefix("/4/broadcasts/apps/") {
                return BroadcastExchange(processor: self, request: request).respond(authenticator: &authenticator)
            }
            return reject(.badPath, request: request, idHeader: "apns-id", id: request.header("apns-id") ?? RandomIdentifiers.uuid())
        case .channelManagement:
            return ChannelManagementExchange(processor: self, request: request).respond(authenticator: &authenticator)
        }
    }

    // MARK: Shared steps

    /// Records and builds an error response.
    func reject(
        _ reason: APNSErrorReason,
        request: EmulatorRequest,
        idHeader: String,
        id: String,
        timestamp: Int64? = nil,
        now: Date? = nil
    ) -> EmulatorResponse {
        let reasonString = reason == .serviceUnavailable ? configuration.serviceUnavailableReason : reason.reasonString
        let rejection = RejectedRequest(
            at: now ?? state.now,
            environment: environment,
            listener: listener.kind,
            method: request.method,
            path: request.path,
            status: reason.status ?? 400,
            reason: reasonString,
            requestID: id
        )
        state.world.withLock { $0.recordRejection(rejection) }
        return .error(reason, idHeader: idHeader, id: id, reasonString: reasonString, timestamp: timestamp)
    }

    /// Applies the injected faults for this request: a response, a reset or a delay.
    func injectedFault(
        for endpoint: APNSEmulatorFault.Endpoint,
        request: EmulatorRequest,
        idHeader: String,
        id: String
    ) -> (response: EmulatorResponse?, delay: Duration?) {
        let actions = state.faultActions(for: endpoint, in: environment)
        guard !actions.isEmpty else { return (nil, nil) }
        state.world.withLock { $0.counters.injectedFaults += actions.count }
        var delay: Duration?
        for action in actions {
            switch action {
            case .respond(let reason):
                var response = reject(reason, request: request, idHeader: idHeader, id: id)
                response.delay = delay
                return (response, nil)
            case .resetConnection:
                var response = EmulatorResponse(status: 0, headers: [])
                response.resetsConnection = true
                return (response, nil)
            case .delay(let fixed, let jitter):
                let jitterNanoseconds = max(0, jitter.components.seconds * 1_000_000_000 + jitter.components.attoseconds / 1_000_000_000)
                let extra = jitterNanoseconds > 0 ? Duration.nanoseconds(Int64.random(in: 0...jitterNanoseconds)) : .zero
                delay = (delay ?? .zero) + fixed + extra
            case .goAway:
                continue
            }
        }
        return (nil, delay)
    }

    /// Checks the provider token; on failure returns the error response.
    func authenticate(
        _ request: EmulatorRequest,
        authenticator: inout ConnectionAuthenticator,
        idHeader: String,
        id: String,
        now: Date
    ) -> Result<ConnectionAuthenticator.Identity, EmulatorResponseBox> {
        let state = self.state
        let result = authenticator.authenticate(
            authorization: request.header("authorization"),
            now: now,
            configuration: configuration,
            keyLookup: { state.key(id: $0) }
        )
        switch result {
        case .success(let identity): return .success(identity)
        case .failure(let reason): return .failure(EmulatorResponseBox(reject(reason, request: request, idHeader: idHeader, id: id, now: now)))
        }
    }

    /// Parses `apns-expiration`: `nil` when absent, `.failure` when not a non-negative integer.
    static func expiration(_ text: String?) -> Checked<Int64?> {
        guard let text else { return .success(nil) }
        guard let value = Int64(text), value >= 0 else { return .failure(.badExpirationDate) }
        return .success(value)
    }

    /// Whether a channel ID is well-formed base64 within the configured length.
    func isWellFormedChannelID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= configuration.maximumChannelIDLength && Data(base64Encoded: id) != nil
    }

    /// The bundle ID named in a broadcast or channel-management path, checked against the team:
    /// a push-type suffix gives `TopicDisallowed`, another team's bundle `TopicMismatch`, a bundle
    /// without the broadcast capability `FeatureNotEnabled`.
    func checkBroadcastTopic(_ bundleID: String, identity: ConnectionAuthenticator.Identity) -> APNSErrorReason? {
        guard !bundleID.isEmpty else { return .badPath }
        let suffixed = APNSPushType.allCases.contains { pushType in
            let topic = pushType.topic(forBundleID: "")
            return !topic.isEmpty && bundleID.hasSuffix(topic)
        }
        if suffixed { return .topicDisallowed }
        return state.world.withLock { world -> APNSErrorReason? in
            guard let app = world.apps[bundleID], app.teamID == identity.teamID else { return .topicMismatch }
            return app.broadcastEnabled ? nil : .featureNotEnabled
        }
    }
}

/// A response carried through `Result`'s failure (responses are not errors themselves).
struct EmulatorResponseBox: Error {
    let response: EmulatorResponse
    init(_ response: EmulatorResponse) { self.response = response }
}
