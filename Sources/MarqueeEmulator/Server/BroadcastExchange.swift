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
        let broadcast: ValidBroadcast
        switch validatedBroadcast(identity: identity, now: now, environment: environment, configuration: configuration)
        {
        case .success(let valid): broadcast = valid
        case .failure(let reason): return reject(reason, requestID, now: now)
        }
        let (admitted, uniqueID) = admit(
            broadcast,
            requestID: requestID,
            now: now,
            environment: environment,
            configuration: configuration
        )
        guard admitted else { return reject(.tooManyRequests, requestID, now: now) }
        // The subscribers are reached after the answer, by the courier or by whatever touches the
        // world first (`EmulatorState.withWorld`).
        processor.state.wakeCourier()
        return EmulatorResponse(status: 200, headers: [("apns-request-id", requestID), ("apns-unique-id", uniqueID)])
    }

    /// A broadcast whose path, headers, channel and payload passed every rule.
    struct ValidBroadcast {
        var channelID: String
        var storagePolicy: MessageStoragePolicy
        var priority: APNSPriority
        var expiration: Int64?
        var payload: PushPayload
    }

    /// The request as APNs checks it, in APNs' order, up to the channel it names.
    private func validatedBroadcast(
        identity: ConnectionAuthenticator.Identity,
        now: Date,
        environment: APNSEnvironment,
        configuration: APNSEmulatorConfiguration
    ) -> Checked<ValidBroadcast> {
        let bundleID = String(request.path.dropFirst("/4/broadcasts/apps/".count))
        guard !bundleID.contains("/") else { return .failure(.badPath) }
        if let reason = processor.checkBroadcastTopic(bundleID, identity: identity) { return .failure(reason) }

        guard let channelID = request.header(.apnsChannelID), !channelID.isEmpty else {
            return .failure(.missingChannelId)
        }
        guard processor.isWellFormedChannelID(channelID) else { return .failure(.badChannelId) }
        guard let pushTypeText = request.header(.apnsPushType) else { return .failure(.missingPushType) }
        guard APNSPushType(headerValue: pushTypeText) == .liveactivity else { return .failure(.invalidPushType) }

        let expiration: Int64?
        switch APNSRequestProcessor.expiration(request.header(.apnsExpiration)) {
        case .success(let value): expiration = value
        case .failure(let reason): return .failure(reason)
        }
        if expiration == nil, configuration.broadcastRequiresExpiration { return .failure(.badExpirationDate) }
        var priority = APNSPriority.immediate
        if let text = request.header(.apnsPriority) {
            guard let parsed = APNSPriority(headerValue: text) else { return .failure(.badPriority) }
            priority = parsed
        } else if configuration.broadcastRequiresPriority {
            return .failure(.badPriority)
        }

        let channel = processor.state.withWorldBeforeDelivery { world in
            world.environments[environment]?.channels[channelID]?.channel
        }
        guard let channel else { return .failure(configuration.neverCreatedChannelBroadcastReason) }
        guard !channel.isDeleted, channel.bundleID == bundleID else { return .failure(.channelNotRegistered) }
        switch channel.messageStoragePolicy {
        case .noMessageStored:
            if let expiration, expiration != 0 { return .failure(.badExpirationDate) }
        case .mostRecentMessageStored:
            let limit = Int64(now.timeIntervalSince1970) + MessageStoragePolicy.maximumStorageSeconds
            if let expiration, expiration > limit, configuration.rejectsBroadcastExpirationBeyondStorageLimit {
                return .failure(.badExpirationDate)
            }
        }

        guard request.bodyLength > 0 else { return .failure(.payloadEmpty) }
        guard request.bodyLength <= APNSPayloadLimit.broadcast else { return .failure(.payloadTooLarge) }
        guard let payload = PushPayload(bytes: request.body) else { return .failure(.badRequestPayload) }
        return .success(
            ValidBroadcast(
                channelID: channelID,
                storagePolicy: channel.messageStoragePolicy,
                priority: priority,
                expiration: expiration,
                payload: payload
            )
        )
    }

    /// The broadcast through the channel's throttle and budget, recorded and queued for its
    /// subscribers (`AnsweredBroadcast`); whether it was admitted, and its `apns-unique-id`.
    private func admit(
        _ broadcast: ValidBroadcast,
        requestID: String,
        now: Date,
        environment: APNSEnvironment,
        configuration: APNSEmulatorConfiguration
    ) -> (admitted: Bool, uniqueID: String) {
        let uniqueID = RandomIdentifiers.uuid()
        let budget = configuration.broadcastBudgetPerHour[broadcast.storagePolicy]
        let throttle = configuration.broadcastThrottle
        let admitted = processor.state.withWorldBeforeDelivery { world -> Bool in
            let capacity = world.historyPerTarget
            let admitted = world.withEnvironment(environment) { env -> Bool in
                // The throttle's state is committed only once the budget also admitted the broadcast,
                // so that a refusal by either leaves both as they were.
                var pacing: PacingThrottle?
                if let throttle {
                    pacing = env.channels[broadcast.channelID]?.pacing
                    guard pacing?.admit(at: now, interval: throttle.interval, burst: throttle.burst) == true else {
                        return false
                    }
                }
                if let budget,
                    env.channels[broadcast.channelID]?.broadcasts.admit(at: now, limit: budget, window: 3600) == false
                {
                    return false
                }
                if let pacing { env.channels[broadcast.channelID]?.pacing = pacing }
                // Its outcomes are filled in when it is delivered.
                env.record(
                    ReceivedPush(
                        receivedAt: now,
                        environment: environment,
                        endpoint: .broadcast,
                        target: broadcast.channelID,
                        requestID: requestID,
                        uniqueID: uniqueID,
                        pushType: APNSPushType.liveactivity.rawValue,
                        priority: broadcast.priority.rawValue,
                        expiration: broadcast.expiration,
                        collapseID: nil,
                        payloadBytes: request.body,
                        outcomes: []
                    ),
                    capacity: capacity
                )
                return true
            }
            guard admitted else { return false }
            world.counters.broadcastsAccepted += 1
            world.answeredBroadcasts.append(
                AnsweredBroadcast(
                    environment: environment,
                    channelID: broadcast.channelID,
                    requestID: requestID,
                    payload: broadcast.payload,
                    priority: broadcast.priority,
                    expiration: broadcast.expiration,
                    admittedAt: now
                )
            )
            return true
        }
        return (admitted, uniqueID)
    }
}
