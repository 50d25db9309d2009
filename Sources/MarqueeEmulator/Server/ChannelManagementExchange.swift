import Foundation
import MarqueeCore
import Synchronization

/// The channel-management API: create (`POST .../channels`, 201 with `apns-channel-id`), read
/// (`GET .../channels` with the `apns-channel-id` header), delete (`DELETE .../channels`, 204) and
/// list (`GET .../all-channels`).
struct ChannelManagementExchange {
    let processor: APNSRequestProcessor
    let request: EmulatorRequest

    private enum Operation {
        case create, read, delete, list
    }

    func respond(authenticator: inout ConnectionAuthenticator) -> EmulatorResponse {
        let route = Self.route(request)
        return processor.respond(
            to: request,
            endpoint: .channelManagement,
            idHeader: .apnsRequestID,
            authenticator: &authenticator,
            precheck: {
                if case .failure(let reason) = route { return reason }
                return nil
            },
            answer: { admission, _ in
                // The precheck refused every failed route, so this is always a success.
                guard case .success(let (bundleID, operation)) = route else {
                    return reject(.internalServerError, admission.id, now: admission.now)
                }
                return answer(bundleID: bundleID, operation: operation, admission: admission)
            }
        )
    }

    private func reject(_ reason: APNSErrorReason, _ requestID: String, now: Date? = nil) -> EmulatorResponse {
        processor.reject(reason, request: request, idHeader: .apnsRequestID, id: requestID, now: now)
    }

    /// `/1/apps/<bundleID>/channels` or `/1/apps/<bundleID>/all-channels`; there is no `/channels/<id>`.
    private static func route(_ request: EmulatorRequest) -> Checked<(String, Operation)> {
        let parts = request.path.split(separator: "?", maxSplits: 1)[0].split(
            separator: "/",
            omittingEmptySubsequences: false
        )
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "1", parts[2] == "apps", !parts[3].isEmpty else {
            return .failure(.badPath)
        }
        switch (parts[4], request.method) {
        case ("channels", "POST"): return .success((String(parts[3]), .create))
        case ("channels", "GET"): return .success((String(parts[3]), .read))
        case ("channels", "DELETE"): return .success((String(parts[3]), .delete))
        case ("all-channels", "GET"): return .success((String(parts[3]), .list))
        case ("channels", _), ("all-channels", _): return .failure(.methodNotAllowed)
        default: return .failure(.badPath)
        }
    }

    private func answer(
        bundleID: String,
        operation: Operation,
        admission: APNSRequestProcessor.Admission
    ) -> EmulatorResponse {
        let requestID = admission.id
        let now = admission.now
        if let reason = processor.checkBroadcastTopic(bundleID, identity: admission.identity) {
            return reject(reason, requestID, now: now)
        }
        if let budget = processor.state.configuration.channelManagementBudgetPerHour {
            let environment = processor.listener.environment
            let admitted = processor.state.withWorldBeforeDelivery { world in
                world.withEnvironment(environment) { env in
                    env.channelManagementRequests[bundleID, default: SlidingWindowBudget()].admit(
                        at: now,
                        limit: budget,
                        window: 3600
                    )
                }
            }
            guard admitted else { return reject(.tooManyRequests, requestID, now: now) }
        }
        let response: EmulatorResponse
        switch operation {
        case .create: response = create(bundleID: bundleID, requestID: requestID, now: now)
        case .read: response = read(bundleID: bundleID, requestID: requestID, now: now)
        case .delete: response = delete(bundleID: bundleID, requestID: requestID, now: now)
        case .list: response = list(bundleID: bundleID, requestID: requestID)
        }
        if response.status < 300 {
            processor.state.withWorldBeforeDelivery { $0.counters.channelRequestsAccepted += 1 }
        }
        return response
    }

    private func create(bundleID: String, requestID: String, now: Date) -> EmulatorResponse {
        let state = processor.state
        let configuration = state.configuration
        let environment = processor.listener.environment
        guard request.bodyLength > 0 else { return reject(.payloadEmpty, requestID, now: now) }
        guard request.bodyLength < EmulatorRequest.bodyRetentionLimit,
            case .object(let body)? = try? JSONParser.parse(request.body)
        else { return reject(.badRequestPayload, requestID, now: now) }
        let known: Set<String> = ["message-storage-policy", "push-type"]
        guard body.keys.allSatisfy(known.contains) else { return reject(.badRequestParams, requestID, now: now) }
        guard case .string(let pushType)? = body["push-type"] else {
            return reject(.badRequestParams, requestID, now: now)
        }
        guard pushType.lowercased() == APNSPushType.channelBodyLiveActivity.lowercased() else {
            return reject(.invalidPushType, requestID, now: now)
        }
        guard case .integer(let policyValue)? = body["message-storage-policy"],
            let policy = MessageStoragePolicy(rawValue: Int(policyValue))
        else { return reject(.badRequestParams, requestID, now: now) }

        let channelID: String? = state.withWorld { world in
            world.withEnvironment(environment) { env -> String? in
                let live = env.liveChannelCount[bundleID, default: 0]
                guard live < configuration.channelsPerApp else { return nil }
                let byteCount = max(1, configuration.channelIDByteCount)
                var id = RandomIdentifiers.channelID(byteCount: byteCount)
                // A channel ID is never reissued, not even after deletion.
                while env.channels[id] != nil { id = RandomIdentifiers.channelID(byteCount: byteCount) }
                env.channels[id] = ChannelState(
                    channel: EmulatedChannel(
                        id: id,
                        environment: environment,
                        bundleID: bundleID,
                        messageStoragePolicy: policy,
                        createdAt: now,
                        isDeleted: false,
                        subscriberIDs: [],
                        broadcastsReceived: 0
                    )
                )
                env.liveChannelCount[bundleID] = live + 1
                return id
            }
        }
        guard let channelID else { return reject(.cannotCreateChannelConfig, requestID, now: now) }
        return EmulatorResponse(status: 201, headers: [("apns-request-id", requestID), ("apns-channel-id", channelID)])
    }

    /// The live channel the `apns-channel-id` header names, or the reason it names none.
    private func namedChannel(bundleID: String) -> Checked<EmulatedChannel> {
        guard let channelID = request.header(.apnsChannelID), !channelID.isEmpty else {
            return .failure(.missingChannelId)
        }
        guard processor.isWellFormedChannelID(channelID) else { return .failure(.badChannelId) }
        let environment = processor.listener.environment
        let channel = processor.state.withWorld { $0.environments[environment]?.channels[channelID]?.channel }
        guard let channel, !channel.isDeleted, channel.bundleID == bundleID else {
            return .failure(.channelNotRegistered)
        }
        return .success(channel)
    }

    private func read(bundleID: String, requestID: String, now: Date) -> EmulatorResponse {
        switch namedChannel(bundleID: bundleID) {
        case .failure(let reason):
            return reject(reason, requestID, now: now)
        case .success(let channel):
            let body: JSONValue = [
                "message-storage-policy": .integer(Int64(channel.messageStoragePolicy.rawValue)),
                "push-type": .string(APNSPushType.channelBodyLiveActivity),
            ]
            return EmulatorResponse(
                status: 200,
                headers: [("content-type", "application/json"), ("apns-request-id", requestID)],
                body: body.jsonBytes
            )
        }
    }

    private func delete(bundleID: String, requestID: String, now: Date) -> EmulatorResponse {
        switch namedChannel(bundleID: bundleID) {
        case .failure(.channelNotRegistered):
            // Unlike a read: Apple's servers answer this DELETE with 404 BadPath (§6a), the documented
            // profile with ChannelNotRegistered.
            return reject(processor.state.configuration.unknownChannelDeletionReason, requestID, now: now)
        case .failure(let reason):
            return reject(reason, requestID, now: now)
        case .success(let channel):
            let environment = processor.listener.environment
            processor.state.withWorld { world in
                world.withEnvironment(environment) { env in
                    env.channels[channel.id]?.channel.isDeleted = true
                    env.liveChannelCount[bundleID, default: 1] -= 1
                }
            }
            return EmulatorResponse(status: 204, headers: [("apns-request-id", requestID)])
        }
    }

    private func list(bundleID: String, requestID: String) -> EmulatorResponse {
        let environment = processor.listener.environment
        let ids = processor.state.withWorld { world -> [String] in
            (world.environments[environment]?.channels.values ?? [:].values)
                .filter { !$0.channel.isDeleted && $0.channel.bundleID == bundleID }
                .sorted { ($0.channel.createdAt, $0.channel.id) < ($1.channel.createdAt, $1.channel.id) }
                .map(\.channel.id)
        }
        let body: JSONValue = ["channels": .array(ids.map { .string($0) })]
        return EmulatorResponse(
            status: 200,
            headers: [("content-type", "application/json"), ("apns-request-id", requestID)],
            body: body.jsonBytes
        )
    }
}
