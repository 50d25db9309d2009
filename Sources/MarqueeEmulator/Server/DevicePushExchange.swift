import Foundation
import MarqueeCore
import Synchronization

/// `POST /3/device/<token>`: every header rule of a device push, then the device's verdict.
struct DevicePushExchange {
    let processor: APNSRequestProcessor
    let request: EmulatorRequest

    func respond(authenticator: inout ConnectionAuthenticator) -> EmulatorResponse {
        processor.respond(
            to: request,
            endpoint: .devicePush,
            idHeader: .apnsID,
            authenticator: &authenticator,
            precheck: { request.method == "POST" ? nil : .methodNotAllowed },
            answer: { admission, authenticator in
                validatedAnswer(
                    apnsID: admission.id,
                    identity: admission.identity,
                    authenticator: &authenticator,
                    now: admission.now,
                    environment: processor.listener.environment,
                    configuration: processor.state.configuration
                )
            }
        )
    }

    private func reject(
        _ reason: APNSErrorReason,
        _ apnsID: String,
        timestamp: Int64? = nil,
        now: Date? = nil
    ) -> EmulatorResponse {
        processor.reject(reason, request: request, idHeader: .apnsID, id: apnsID, timestamp: timestamp, now: now)
    }

    private func validatedAnswer(
        apnsID: String,
        identity: ConnectionAuthenticator.Identity,
        authenticator: inout ConnectionAuthenticator,
        now: Date,
        environment: APNSEnvironment,
        configuration: APNSEmulatorConfiguration
    ) -> EmulatorResponse {
        let push: DevicePush
        switch validatedPush(identity: identity, authenticator: &authenticator, configuration: configuration) {
        case .success(let valid): push = valid
        case .failure(let reason): return reject(reason, apnsID, now: now)
        }
        let verdict = deliver(push, apnsID: apnsID, now: now, environment: environment, configuration: configuration)
        switch verdict {
        case .rejected(let reason, let timestamp):
            return reject(reason, apnsID, timestamp: timestamp, now: now)
        case .accepted(let uniqueID, _, let appEvent):
            if let appEvent { processor.state.appEventSink.yield(appEvent) }
            var headers = [("apns-id", apnsID)]
            if let uniqueID { headers.append(("apns-unique-id", uniqueID)) }
            return EmulatorResponse(status: 200, headers: headers)
        }
    }

    /// A device push whose headers, topic, payload size and token passed every rule.
    struct DevicePush {
        var token: String
        var bundleID: String
        var pushType: APNSPushType
        var priority: APNSPriority
        var expiration: Int64?
        var collapseID: String?
        var payload: PushPayload?
    }

    enum Verdict {
        /// `firstStart`: the first start APNs accepted for the device.
        case accepted(uniqueID: String?, firstStart: Bool, appEvent: AppModelEvent?)
        case rejected(APNSErrorReason, timestamp: Int64?)
    }

    /// The request's path and headers as APNs checks them, in APNs' order, before any device is looked up.
    private func validatedPush(
        identity: ConnectionAuthenticator.Identity,
        authenticator: inout ConnectionAuthenticator,
        configuration: APNSEmulatorConfiguration
    ) -> Checked<DevicePush> {
        let state = processor.state
        // "/3/device" or "/3/device/" with nothing after it names no token.
        guard request.path == "/3/device" || request.path.hasPrefix("/3/device/") else { return .failure(.badPath) }
        let afterPrefix = request.path.utf8.index(request.path.startIndex, offsetBy: "/3/device".utf8.count)
        let tokenText = request.path[afterPrefix...].drop { $0 == "/" }
        guard !tokenText.isEmpty else { return .failure(.missingDeviceToken) }

        let pushType: APNSPushType
        if let text = request.header(.apnsPushType) {
            guard let parsed = APNSPushType(headerValue: text) else { return .failure(.invalidPushType) }
            pushType = parsed
        } else {
            pushType = .alert
        }
        guard let topic = request.header(.apnsTopic), !topic.isEmpty else { return .failure(.missingTopic) }
        // Byte comparisons: topics are ASCII, and Character-wise ones cost more than the rest here.
        let suffix = pushType.topicSuffix.utf8
        guard topic.utf8.count > suffix.count, topic.utf8.suffix(suffix.count).elementsEqual(suffix) else {
            return .failure(.badTopic)
        }
        let bundleID = String(decoding: topic.utf8.dropLast(suffix.count), as: UTF8.self)
        let ownsTopic = authenticator.owns(bundleID) { bundleID in
            state.withWorldBeforeDelivery { $0.team(identity.teamID, owns: bundleID) }
        }
        guard ownsTopic else { return .failure(.deviceTokenNotForTopic) }

        let expiration: Int64?
        switch APNSRequestProcessor.expiration(request.header(.apnsExpiration)) {
        case .success(let value): expiration = value
        case .failure(let reason): return .failure(reason)
        }
        var priority = APNSPriority.immediate
        if let text = request.header(.apnsPriority) {
            guard let parsed = APNSPriority(headerValue: text) else { return .failure(.badPriority) }
            priority = parsed
        }
        // Apple: background pushes must use priority 5; 10 "is an error".
        if pushType == .background, priority == .immediate { return .failure(.badPriority) }
        let collapseID = request.header(.apnsCollapseID)
        if let collapseID, collapseID.utf8.count > APNSPayloadLimit.collapseIDBytes { return .failure(.badCollapseId) }

        guard request.bodyLength > 0 else { return .failure(.payloadEmpty) }
        let limit = pushType == .voip ? APNSPayloadLimit.voip : APNSPayloadLimit.device
        guard request.bodyLength <= limit else { return .failure(.payloadTooLarge) }
        let payload = PushPayload(bytes: request.body)
        if payload == nil, configuration.rejectsMalformedDevicePayload { return .failure(.badRequestPayload) }

        guard let token = RandomIdentifiers.normalizedHexToken(tokenText) else { return .failure(.badDeviceToken) }
        return .success(
            DevicePush(
                token: token,
                bundleID: bundleID,
                pushType: pushType,
                priority: priority,
                expiration: expiration,
                collapseID: collapseID,
                payload: payload
            )
        )
    }

    /// The push to its device (or APNs holding it), recorded, counted and told to the played app.
    private func deliver(
        _ push: DevicePush,
        apnsID: String,
        now: Date,
        environment: APNSEnvironment,
        configuration: APNSEmulatorConfiguration
    ) -> Verdict {
        let uniqueID = environment == .sandbox ? RandomIdentifiers.uuid() : nil
        // A start or a plain device push reaches no activity a broadcast's delivery is walking
        // (a new one is not among its subscribers): it need not wait for that walk. An update
        // token's push changes its activity, after every broadcast answered before it.
        let needsDeliveries = { (world: borrowing EmulatorWorld) -> Bool in
            guard case .update? = world.environments[environment]?.tokens[push.token] else { return false }
            return true
        }
        return processor.state.withWorld(deliveringFirstIf: needsDeliveries) { world -> Verdict in
            let capacity = world.historyPerTarget
            var deliveredTo: TokenTarget?
            let verdict = world.withEnvironment(environment) { env -> Verdict in
                switch env.lookUp(token: push.token, now: now, configuration: configuration) {
                case .unknown:
                    return .rejected(.badDeviceToken, timestamp: nil)
                case .retired(let milliseconds):
                    return .rejected(.unregistered, timestamp: milliseconds)
                case .live(let target, let tokenBundleID):
                    guard tokenBundleID == push.bundleID else {
                        return .rejected(.deviceTokenNotForTopic, timestamp: nil)
                    }
                    let verdict = env.deliverDevicePush(
                        AcceptedDevicePush(
                            target: target,
                            token: push.token,
                            requestID: apnsID,
                            payload: push.payload,
                            priority: push.priority,
                            expiration: push.expiration
                        ),
                        now: now,
                        environment: environment,
                        configuration: configuration
                    )
                    if verdict.overBudget, configuration.budgetExceededResponse == .tooManyRequests {
                        return .rejected(.tooManyRequests, timestamp: nil)
                    }
                    var firstStart = false
                    if case .pushToStart(let deviceID, _) = target, let before = env.devices[deviceID]?.startsAccepted {
                        env.devices[deviceID]?.startsAccepted = before + 1
                        firstStart = before == 0
                    }
                    env.record(
                        ReceivedPush(
                            receivedAt: now,
                            environment: environment,
                            endpoint: .device,
                            target: push.token,
                            requestID: apnsID,
                            uniqueID: uniqueID,
                            pushType: push.pushType.rawValue,
                            priority: push.priority.rawValue,
                            expiration: push.expiration,
                            collapseID: push.collapseID,
                            payloadBytes: request.body,
                            outcomes: [verdict.outcome]
                        ),
                        capacity: capacity
                    )
                    deliveredTo = target
                    return .accepted(uniqueID: uniqueID, firstStart: firstStart, appEvent: nil)
                }
            }
            if case .accepted(let uniqueID, let firstStart, _) = verdict {
                world.counters.devicePushesAccepted += 1
                if firstStart { world.counters.devicesStarted += 1 }
                if !world.appMarquees.isEmpty, let target = deliveredTo {
                    // The device got it now (an offline one gets it when back): its app may notice.
                    let appEvent = world.appEvent(for: target, payload: push.payload?.bytes, environment: environment)
                    return .accepted(uniqueID: uniqueID, firstStart: firstStart, appEvent: appEvent)
                }
            }
            return verdict
        }
    }
}
