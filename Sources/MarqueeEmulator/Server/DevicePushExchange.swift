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

    private func reject(_ reason: APNSErrorReason, _ apnsID: String, timestamp: Int64? = nil, now: Date? = nil) -> EmulatorResponse {
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
        let state = processor.state
        // "/3/device" or "/3/device/" with nothing after it names no token.
        guard request.path == "/3/device" || request.path.hasPrefix("/3/device/") else { return reject(.badPath, apnsID, now: now) }
        let afterPrefix = request.path.utf8.index(request.path.startIndex, offsetBy: "/3/device".utf8.count)
        let tokenText = request.path[afterPrefix...].drop { $0 == "/" }
        guard !tokenText.isEmpty else { return reject(.missingDeviceToken, apnsID, now: now) }

        let pushType: APNSPushType
        if let text = request.header(.apnsPushType) {
            guard let parsed = APNSPushType(headerValue: text) else { return reject(.invalidPushType, apnsID, now: now) }
            pushType = parsed
        } else {
            pushType = .alert
        }
        guard let topic = request.header(.apnsTopic), !topic.isEmpty else { return reject(.missingTopic, apnsID, now: now) }
        // Byte comparisons: topics are ASCII, and Character-wise ones cost more than the rest here.
        let suffix = pushType.topicSuffix.utf8
        guard topic.utf8.count > suffix.count, topic.utf8.suffix(suffix.count).elementsEqual(suffix) else {
            return reject(.badTopic, apnsID, now: now)
        }
        let bundleID = String(decoding: topic.utf8.dropLast(suffix.count), as: UTF8.self)
        let ownsTopic = authenticator.owns(bundleID) { bundleID in
            state.world.withLock { $0.team(identity.teamID, owns: bundleID) }
        }
        guard ownsTopic else { return reject(.deviceTokenNotForTopic, apnsID, now: now) }

        let expiration: Int64?
        switch APNSRequestProcessor.expiration(request.header(.apnsExpiration)) {
        case .success(let value): expiration = value
        case .failure(let reason): return reject(reason, apnsID, now: now)
        }
        var priority = APNSPriority.immediate
        if let text = request.header(.apnsPriority) {
            guard let parsed = APNSPriority(headerValue: text) else { return reject(.badPriority, apnsID, now: now) }
            priority = parsed
        }
        // Apple: background pushes must use priority 5; 10 "is an error".
        if pushType == .background, priority == .immediate { return reject(.badPriority, apnsID, now: now) }
        let collapseID = request.header(.apnsCollapseID)
        if let collapseID, collapseID.utf8.count > APNSPayloadLimit.collapseIDBytes { return reject(.badCollapseId, apnsID, now: now) }

        guard request.bodyLength > 0 else { return reject(.payloadEmpty, apnsID, now: now) }
        let limit = pushType == .voip ? APNSPayloadLimit.voip : APNSPayloadLimit.device
        guard request.bodyLength <= limit else { return reject(.payloadTooLarge, apnsID, now: now) }
        let payload = PushPayload(bytes: request.body)
        if payload == nil, configuration.rejectsMalformedDevicePayload { return reject(.badRequestPayload, apnsID, now: now) }

        guard let token = RandomIdentifiers.normalizedHexToken(tokenText) else { return reject(.badDeviceToken, apnsID, now: now) }

        enum Verdict {
            /// `firstStart`: the first start APNs accepted for the device.
            case accepted(uniqueID: String?, firstStart: Bool, appEvent: AppModelEvent?)
            case rejected(APNSErrorReason, timestamp: Int64?)
        }
        let uniqueID = environment == .sandbox ? RandomIdentifiers.uuid() : nil
        let verdict = state.world.withLock { world -> Verdict in
            let capacity = world.historyPerTarget
            var deliveredTo: TokenTarget?
            let verdict = world.withEnvironment(environment) { env -> Verdict in
                switch env.lookUp(token: token, now: now, configuration: configuration) {
                case .unknown:
                    return .rejected(.badDeviceToken, timestamp: nil)
                case .retired(let milliseconds):
                    return .rejected(.unregistered, timestamp: milliseconds)
                case .live(let target, let tokenBundleID):
                    guard tokenBundleID == bundleID else { return .rejected(.deviceTokenNotForTopic, timestamp: nil) }
                    let verdict = env.deliverDevicePush(
                        AcceptedDevicePush(
                            target: target,
                            token: token,
                            requestID: apnsID,
                            payload: payload,
                            priority: priority,
                            expiration: expiration
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
                            target: token,
                            requestID: apnsID,
                            uniqueID: uniqueID,
                            pushType: pushType.rawValue,
                            priority: priority.rawValue,
                            expiration: expiration,
                            collapseID: collapseID,
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
                    return .accepted(uniqueID: uniqueID, firstStart: firstStart, appEvent: world.appEvent(for: target, payload: payload?.bytes, environment: environment))
                }
            }
            return verdict
        }
        switch verdict {
        case .rejected(let reason, let timestamp):
            return reject(reason, apnsID, timestamp: timestamp, now: now)
        case .accepted(let uniqueID, _, let appEvent):
            if let appEvent { state.appEventSink.yield(appEvent) }
            var headers = [("apns-id", apnsID)]
            if let uniqueID { headers.append(("apns-unique-id", uniqueID)) }
            return EmulatorResponse(status: 200, headers: headers)
        }
    }
}
