import Foundation
import MarqueeCore
import Synchronization

/// `POST /4/broadcasts/apps/<bundleID>`: a Live Activity update or end on a channel, delivered to
/// every subscribed activity. Broadcasts speak `apns-request-id`, never `apns-id`.
struct BroadcastExchange {
    let processor: APNSRequestProcessor
    let request: EmulatorRequest

    func respond(authenticator: inout ConnectionAuthenticator) -> EmulatorResponse {
        processor.respond(
            to: request,
            endpoint: .broadcast,
            idHeader: .apnsRequestID,
            authenticator: &authenticator,
            precheck: { request.method == "POST" ? nil : .methodNotAllowed },
            answer: { admission, _ in
                validatedAnswer(
                    requestID: admission.id,
                    identity: admission.identity,
                    now: admission.now,
                    environment: processor.listener.environment,
                    configuration: processor.state.configuration
                )
            }
        )
    }

    private func reject(_ reason: APNSErrorReason, _ requestID: String, now: Date? = nil) -> EmulatorResponse {
        processor.reject(reason, request: request, idHeader: .apnsRequestID, id: requestID, now: now)
    }

    private func validatedAnswer(
        requestID: String,
        identity: ConnectionAuthenticator.Identity,
        now: Date,
        environment: APNSEnvironment,
        configuration: APNSEmulatorConfiguration
    ) -> EmulatorResponse {
        let state = processor.state
        let bundleID = String(request.path.dropFirst("/4/broadcasts/apps/".count))
        guard !bundleID.contains("/") else { return reject(.badPath, requestID, now: now) }
        if let reason = processor.checkBroadcastTopic(bundleID, identity: identity) { return reject(reason, requestID, now: now) }

        guard let channelID = request.header(.apnsChannelID), !channelID.isEmpty else {
            return reject(.missingChannelId, requestID, now: now)
        }
        guard processor.isWellFormedChannelID(channelID) else { return reject(.badChannelId, requestID, now: now) }
        guard let pushTypeText = request.header(.apnsPushType) else { return reject(.missingPushType, requestID, now: now) }
        guard APNSPushType(headerValue: pushTypeText) == .liveactivity else { return reject(.invalidPushType, requestID, now: now) }

        let expiration: Int64?
        switch APNSRequestProcessor.expiration(request.header(.apnsExpiration)) {
        case .success(let value): expiration = value
        case .failure(let reason): return reject(reason, requestID, now: now)
        }
        if expiration == nil, configuration.broadcastRequiresExpiration { return reject(.badExpirationDate, requestID, now: now) }
        var priority = APNSPriority.immediate
        if let text = request.header(.apnsPriority) {
            guard let parsed = APNSPriority(headerValue: text) else { return reject(.badPriority, requestID, now: now) }
            priority = parsed
        } else if configuration.broadcastRequiresPriority {
            return reject(.badPriority, requestID, now: now)
        }

        let channel = state.world.withLock { world in
            world.environments[environment]?.channels[channelID]?.channel
        }
        guard let channel else { return reject(configuration.neverCreatedChannelBroadcastReason, requestID, now: now) }
        guard !channel.isDeleted, channel.bundleID == bundleID else { return reject(.channelNotRegistered, requestID, now: now) }
        switch channel.messageStoragePolicy {
        case .noMessageStored:
            if let expiration, expiration != 0 { return reject(.badExpirationDate, requestID, now: now) }
        case .mostRecentMessageStored:
            let limit = Int64(now.timeIntervalSince1970) + MessageStoragePolicy.maximumStorageSeconds
            if let expiration, expiration > limit, configuration.rejectsBroadcastExpirationBeyondStorageLimit {
                return reject(.badExpirationDate, requestID, now: now)
            }
        }

        guard request.bodyLength > 0 else { return reject(.payloadEmpty, requestID, now: now) }
        guard request.bodyLength <= APNSPayloadLimit.broadcast else { return reject(.payloadTooLarge, requestID, now: now) }
        guard let payload = PushPayload(bytes: request.body) else { return reject(.badRequestPayload, requestID, now: now) }

        let uniqueID = RandomIdentifiers.uuid()
        let budget = configuration.broadcastBudgetPerHour[channel.messageStoragePolicy]
        let throttle = configuration.broadcastThrottle
        var appEvents: [AppModelEvent] = []
        let admitted = state.world.withLock { world -> Bool in
            let capacity = world.historyPerTarget
            var endedOn: [String] = []
            let admitted = world.withEnvironment(environment) { env -> Bool in
                // The throttle's state is committed only once the budget also admitted the broadcast,
                // so that a refusal by either leaves both as they were.
                var pacing: PacingThrottle?
                if let throttle {
                    pacing = env.channels[channelID]?.pacing
                    guard pacing?.admit(at: now, interval: throttle.interval, burst: throttle.burst) == true else { return false }
                }
                if let budget, env.channels[channelID]?.broadcasts.admit(at: now, limit: budget, window: 3600) == false {
                    return false
                }
                if let pacing { env.channels[channelID]?.pacing = pacing }
                let outcomes = env.deliverBroadcast(
                    channelID: channelID,
                    requestID: requestID,
                    payload: payload,
                    priority: priority,
                    expiration: expiration,
                    now: now,
                    configuration: configuration,
                    endedOn: &endedOn
                )
                env.record(
                    ReceivedPush(
                        receivedAt: now,
                        environment: environment,
                        endpoint: .broadcast,
                        target: channelID,
                        requestID: requestID,
                        uniqueID: uniqueID,
                        pushType: APNSPushType.liveactivity.rawValue,
                        priority: priority.rawValue,
                        expiration: expiration,
                        collapseID: nil,
                        payloadBytes: request.body,
                        outcomes: outcomes
                    ),
                    capacity: capacity
                )
                return true
            }
            if admitted { world.counters.broadcastsAccepted += 1 }
            appEvents = endedOn.compactMap { world.appEventForEndedActivity(deviceID: $0, environment: environment) }
            return admitted
        }
        // Handed over outside the world's lock: the app model takes its own time.
        for event in appEvents { state.appEventSink.yield(event) }
        guard admitted else { return reject(.tooManyRequests, requestID, now: now) }
        return EmulatorResponse(status: 200, headers: [("apns-request-id", requestID), ("apns-unique-id", uniqueID)])
    }
}
