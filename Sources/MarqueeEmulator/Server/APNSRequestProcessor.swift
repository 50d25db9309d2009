import Foundation
import Logging
import MarqueeCore
import Synchronization

/// Answers one request as APNs would, for one listener. Runs on the connection's event loop and
/// touches shared state only through ``EmulatorState``'s short critical sections.
struct APNSRequestProcessor: Sendable {
    let state: EmulatorState
    let listener: APNSEmulatorListener

    private var configuration: APNSEmulatorConfiguration { state.configuration }
    private var environment: APNSEnvironment { listener.environment }

    func process(_ request: EmulatorRequest, authenticator: inout ConnectionAuthenticator) -> EmulatorResponse {
        switch listener.kind {
        case .push:
            if request.path.hasPrefix("/3/device") {
                return DevicePushExchange(processor: self, request: request).respond(authenticator: &authenticator)
            }
            if request.path.hasPrefix("/4/broadcasts/apps/") {
                return BroadcastExchange(processor: self, request: request).respond(authenticator: &authenticator)
            }
            return reject(
                .badPath,
                request: request,
                idHeader: .apnsID,
                id: request.header(.apnsID) ?? RandomIdentifiers.uuid()
            )
        case .channelManagement:
            return ChannelManagementExchange(processor: self, request: request).respond(authenticator: &authenticator)
        }
    }

    // MARK: Shared steps

    /// What every endpoint has checked before its own rules: the request ID to answer with, who the
    /// provider token speaks for, and the time of the request.
    struct Admission {
        let id: String
        let identity: ConnectionAuthenticator.Identity
        let now: Date
    }

    /// The steps every endpoint shares, in APNs' order: injected faults, the endpoint's own routing
    /// check (`precheck`), duplicate headers, the request ID's form, the provider token. Then
    /// `answer` applies the endpoint's rules.
    func respond(
        to request: EmulatorRequest,
        endpoint: APNSEmulatorFault.Endpoint,
        idHeader: APNSRequestHeader,
        authenticator: inout ConnectionAuthenticator,
        precheck: () -> APNSErrorReason?,
        answer: (Admission, inout ConnectionAuthenticator) -> EmulatorResponse
    ) -> EmulatorResponse {
        let requested = request.header(idHeader)
        let id = requested ?? RandomIdentifiers.uuid()
        let fault = injectedFault(for: endpoint, request: request, idHeader: idHeader, id: id)
        if var response = fault.response {
            // An answer about the device or the rate (429, 410) comes after APNs checked the
            // provider token, so an injected answer other than 403 on a good token lifts the
            // connection's one-stream limit as a real answer would (for 5xx that order is
            // UNCONFIRMED; the client reads any answer but 403 the same way). Without this, a
            // connection whose first answers were all injected kept one stream for good and
            // answered a fan-out's pushes one at a time.
            if !response.resetsConnection, response.status != 403,
                case .success = checkToken(of: request, now: state.now, authenticator: &authenticator)
            {
                response.authenticated = true
            }
            return response
        }
        var response = admit(
            request,
            requested: requested,
            id: id,
            idHeader: idHeader,
            authenticator: &authenticator,
            precheck: precheck,
            answer: answer
        )
        response.delay = fault.delay
        // Processed (delivered, if it was accepted), and the answer is lost with the connection.
        if fault.resetAfterProcessing { response.resetsConnection = true }
        return response
    }

    private func admit(
        _ request: EmulatorRequest,
        requested: String?,
        id: String,
        idHeader: APNSRequestHeader,
        authenticator: inout ConnectionAuthenticator,
        precheck: () -> APNSErrorReason?,
        answer: (Admission, inout ConnectionAuthenticator) -> EmulatorResponse
    ) -> EmulatorResponse {
        if let reason = precheck() { return reject(reason, request: request, idHeader: idHeader, id: id) }
        if request.duplicatedHeader != nil {
            return reject(.duplicateHeaders, request: request, idHeader: idHeader, id: id)
        }
        if let requested, !RandomIdentifiers.isCanonicalUUID(requested) {
            return reject(.badMessageId, request: request, idHeader: idHeader, id: id)
        }
        let now = state.now
        switch checkToken(of: request, now: now, authenticator: &authenticator) {
        case .failure(let reason):
            return reject(reason, request: request, idHeader: idHeader, id: id, now: now)
        case .success(let identity):
            var response = answer(Admission(id: id, identity: identity, now: now), &authenticator)
            response.authenticated = true
            return response
        }
    }

    /// The request's provider token, checked against the connection's and the registered keys.
    private func checkToken(
        of request: EmulatorRequest,
        now: Date,
        authenticator: inout ConnectionAuthenticator
    ) -> Checked<ConnectionAuthenticator.Identity> {
        let state = self.state
        return authenticator.authenticate(
            authorization: request.header(.authorization),
            now: now,
            configuration: configuration,
            keyLookup: { state.key(id: $0) }
        )
    }

    /// Records and builds an error response.
    func reject(
        _ reason: APNSErrorReason,
        request: EmulatorRequest,
        idHeader: APNSRequestHeader,
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
        state.withWorldBeforeDelivery { $0.recordRejection(rejection) }
        configuration.logger.debug(
            "rejected",
            metadata: [
                "apns.status": "\(rejection.status)", "apns.reason": "\(reasonString)", "apns.request_id": "\(id)",
                "http.method": "\(request.method)", "http.path": "\(Self.loggablePath(request.path))",
                "emulator.listener": "\(listener)",
            ]
        )
        return .error(reason, idHeader: idHeader, id: id, reasonString: reasonString, timestamp: timestamp)
    }

    /// A request path fit for logs: a device token (`/3/device/<token>`) shows its last 8
    /// characters only, as every push token in Marquee's logs does.
    static func loggablePath(_ path: String) -> String {
        let prefix = "/3/device/"
        guard path.hasPrefix(prefix) else { return path }
        let token = path.dropFirst(prefix.count)
        return token.count > PushTokenRedaction.visibleCharacters ? prefix + PushTokenRedaction.redacted(token) : path
    }

    /// What the injected faults do to one request: answer it in place of the endpoint (a response,
    /// or a reset before processing), delay its answer, or drop the connection once it is processed.
    private struct InjectedFault {
        var response: EmulatorResponse?
        var delay: Duration?
        var resetAfterProcessing = false
    }

    /// Applies the injected faults for this request: a response, a reset or a delay.
    private func injectedFault(
        for endpoint: APNSEmulatorFault.Endpoint,
        request: EmulatorRequest,
        idHeader: APNSRequestHeader,
        id: String
    ) -> InjectedFault {
        let actions = state.faultActions(for: endpoint, in: environment)
        guard !actions.isEmpty else { return InjectedFault() }
        state.withWorldBeforeDelivery { $0.counters.injectedFaults += actions.count }
        var fault = InjectedFault()
        for action in actions {
            switch action {
            case .respond(let reason):
                var response = reject(reason, request: request, idHeader: idHeader, id: id)
                response.delay = fault.delay
                return InjectedFault(response: response)
            case .resetConnection:
                var response = EmulatorResponse(status: 0, headers: [])
                response.resetsConnection = true
                return InjectedFault(response: response)
            case .resetConnectionAfterProcessing:
                fault.resetAfterProcessing = true
            case .delay(let fixed, let jitter):
                let jitterNanoseconds = max(0, jitter.wholeNanoseconds)
                let extra =
                    jitterNanoseconds > 0 ? Duration.nanoseconds(Int64.random(in: 0...jitterNanoseconds)) : .zero
                fault.delay = (fault.delay ?? .zero) + fixed + extra
            case .goAway:
                continue
            }
        }
        return fault
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
    /// without the broadcast capability the configured reason (`BroadcastFeatureNotEnabled` as
    /// observed, `FeatureNotEnabled` as documented).
    func checkBroadcastTopic(_ bundleID: String, identity: ConnectionAuthenticator.Identity) -> APNSErrorReason? {
        guard !bundleID.isEmpty else { return .badPath }
        let suffixed = APNSPushType.allCases.contains { pushType in
            !pushType.topicSuffix.isEmpty && bundleID.hasSuffix(pushType.topicSuffix)
        }
        if suffixed { return .topicDisallowed }
        return state.withWorldBeforeDelivery { world -> APNSErrorReason? in
            guard let app = world.apps[bundleID], app.teamID == identity.teamID else { return .topicMismatch }
            return app.broadcastEnabled ? nil : configuration.featureNotEnabledReason
        }
    }
}
