import Foundation
import MarqueeCore

/// A device's verdict on one push: what it did, and whether a device-side budget was exceeded
/// (which the emulator may be configured to answer with 429).
struct DeviceVerdict: Sendable {
    var outcome: DeviceOutcome
    var overBudget = false
}

/// A device push APNs accepted, as the world receives it.
struct AcceptedDevicePush {
    var target: TokenTarget
    /// The token it was addressed to, and its `apns-id`: where its history entry is.
    var token: String
    var requestID: String
    var payload: PushPayload?
    var priority: APNSPriority
    /// `apns-expiration`: `0` deliver once, else keep until then; `nil` (absent) keep for the
    /// configured default.
    var expiration: Int64?
}

extension EnvironmentWorld {
    /// Delivers an accepted device push to what its token stands for, as the device would treat it;
    /// to an offline device, APNs holds it instead (unless `apns-expiration` is 0).
    mutating func deliverDevicePush(
        _ push: AcceptedDevicePush,
        now: Date,
        environment: APNSEnvironment,
        configuration: APNSEmulatorConfiguration
    ) -> DeviceVerdict {
        if devices[push.target.deviceID]?.device.isOnline == false {
            return hold(push, now: now, configuration: configuration)
        }
        return deliverNow(
            to: push.target,
            payload: push.payload,
            priority: push.priority,
            now: now,
            environment: environment,
            configuration: configuration
        )
    }

    private mutating func deliverNow(
        to target: TokenTarget,
        payload: PushPayload?,
        priority: APNSPriority,
        now: Date,
        environment: APNSEnvironment,
        configuration: APNSEmulatorConfiguration
    ) -> DeviceVerdict {
        switch target {
        case .device:
            return DeviceVerdict(outcome: .applied)
        case .pushToStart(let deviceID, let attributesType):
            return start(
                deviceID: deviceID,
                attributesType: attributesType,
                payload: payload,
                now: now,
                environment: environment,
                configuration: configuration
            )
        case .update(_, let activityID):
            guard var state = activities[activityID] else {
                return DeviceVerdict(outcome: .ignored("no such activity"))
            }
            let context = UpdateContext(
                priority: priority,
                countsAgainstBudget: true,
                now: now,
                configuration: configuration
            )
            let verdict = Self.apply(ActivityUpdateFields(payload), to: &state, context: context)
            if case .applied = verdict.outcome, state.activity.endedAt != nil { unsubscribe(state.activity) }
            activities[activityID] = state
            return verdict
        }
    }

    /// Begins delivering an accepted broadcast on its channel: the channel counts it, and a
    /// Most-Recent-Message-Stored channel keeps it (unless `apns-expiration` is 0) for at most 8
    /// hours, so that subscribers on offline devices get it when they are back; on a
    /// No-Message-Stored channel they miss it. Returns the activities subscribed now, whom
    /// `deliverBroadcast(_:to:)` then reaches a slice at a time (nil: no such channel). An activity
    /// subscribed after this does not get the broadcast: APNs took it before.
    mutating func beginBroadcastDelivery(_ broadcast: AnsweredBroadcast) -> [String]? {
        guard var channel = channels[broadcast.channelID] else { return nil }
        channel.channel.broadcastsReceived += 1
        if channel.channel.messageStoragePolicy == .mostRecentMessageStored, broadcast.expiration != 0 {
            let now = broadcast.admittedAt
            let limit = now.addingTimeInterval(TimeInterval(MessageStoragePolicy.maximumStorageSeconds))
            let expiresAt = min(
                broadcast.expiration.map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? limit,
                limit
            )
            channel.storedMessage =
                expiresAt > now
                ? HeldPush(
                    target: nil,
                    payload: broadcast.payload,
                    priority: broadcast.priority,
                    expiresAt: expiresAt,
                    historyKey: broadcast.channelID,
                    requestID: broadcast.requestID
                )
                : nil
        }
        channels[broadcast.channelID] = channel
        return channel.channel.subscriberIDs
    }

    /// Delivers the broadcast `delivery` carries to `subscribers` (a slice of those
    /// `beginBroadcastDelivery` returned), adding their outcomes, the activities no longer
    /// subscribed (gone, or ended) and the devices whose activity it ended: their apps, when
    /// played, notice it the next time they run, as ActivityKit's state updates do.
    mutating func deliverBroadcast(_ delivery: inout BroadcastDelivery, to subscribers: ArraySlice<String>) {
        let broadcast = delivery.broadcast
        let stored = channels[broadcast.channelID]?.storedMessage
        let storagePolicy = channels[broadcast.channelID]?.channel.messageStoragePolicy
        for activityID in subscribers {
            // In place: copying each activity out and back was a second hash and a copy apiece.
            guard let index = activities.index(forKey: activityID) else {
                delivery.unsubscribed.insert(activityID)
                continue
            }
            let deviceID = activities.values[index].activity.deviceID
            if devices[deviceID]?.device.isOnline == false {
                guard let stored, stored.requestID == broadcast.requestID else {
                    let why =
                        storagePolicy == .noMessageStored
                        ? "the channel stores no messages" : "apns-expiration 0 asks APNs not to keep the message"
                    delivery.outcomes.append(.ignored("the device is offline and \(why)"))
                    continue
                }
                activities.values[index].missedChannelMessage = true
                delivery.outcomes.append(
                    .stored("the device is offline; the channel keeps the message until \(Self.text(stored.expiresAt))")
                )
                continue
            }
            let verdict = Self.apply(delivery.update, to: &activities.values[index], context: delivery.context)
            delivery.outcomes.append(verdict.outcome)
            if activities.values[index].activity.endedAt != nil {
                delivery.unsubscribed.insert(activityID)
                if case .applied = verdict.outcome { delivery.endedOn.append(deviceID) }
            }
        }
    }

    /// Ends `delivery`: the activities it found gone or ended leave the channel's subscribers, and
    /// the broadcast's history entry gets its outcomes.
    mutating func finishBroadcastDelivery(_ delivery: BroadcastDelivery) {
        let broadcast = delivery.broadcast
        if !delivery.unsubscribed.isEmpty {
            channels[broadcast.channelID]?.channel.subscriberIDs.removeAll { delivery.unsubscribed.contains($0) }
        }
        history[broadcast.channelID]?.modify(where: { $0.requestID == broadcast.requestID }) {
            $0.outcomes = delivery.outcomes
        }
    }

    private mutating func start(
        deviceID: String,
        attributesType: String,
        payload: PushPayload?,
        now: Date,
        environment: APNSEnvironment,
        configuration: APNSEmulatorConfiguration
    ) -> DeviceVerdict {
        guard var device = devices[deviceID] else { return DeviceVerdict(outcome: .ignored("no such device")) }
        if let problem = Self.startPayloadProblem(payload, attributesType: attributesType) {
            return DeviceVerdict(outcome: .ignored(problem))
        }
        guard let aps = payload?.aps else { return DeviceVerdict(outcome: .ignored("no aps dictionary")) }
        guard device.device.areLiveActivitiesEnabled else {
            return DeviceVerdict(
                outcome: .ignored("Live Activities are turned off for the app: APNs accepted the start, nothing shows")
            )
        }

        let iOSVersion = device.device.iOSVersion
        var channelID: String?
        if let requested = aps["input-push-channel"] {
            guard iOSVersion >= IOSVersion.channels else {
                return DeviceVerdict(outcome: .ignored("input-push-channel needs iOS 18; the activity does not start"))
            }
            guard case .string(let id) = requested, let channel = channels[id]?.channel, !channel.isDeleted,
                channel.bundleID == device.device.bundleID
            else { return DeviceVerdict(outcome: .ignored("input-push-channel names no registered channel")) }
            channelID = id
        }
        let wantsToken: Bool
        switch aps["input-push-token"] {
        case .integer(1)?, .bool(true)?: wantsToken = true
        default: wantsToken = false
        }
        // Before iOS 18 every remotely started activity gets an update token, which the app reports.
        let issuesToken = iOSVersion < IOSVersion.channels || wantsToken

        if let budget = configuration.pushToStartBudget,
            !device.starts.admit(at: now, limit: budget, window: configuration.pushToStartWindow)
        {
            devices[deviceID] = device
            return DeviceVerdict(outcome: .ignored("push-to-start budget exhausted"), overBudget: true)
        }

        let activityID = RandomIdentifiers.uuid()
        var updateToken: String?
        if issuesToken {
            let token = RandomIdentifiers.token()
            tokens[token] = .update(deviceID: deviceID, activityID: activityID)
            updateToken = token
        }
        var activity = Self.startedActivity(
            id: activityID,
            deviceID: deviceID,
            device: device.device,
            environment: environment,
            attributesType: attributesType,
            aps: aps,
            updateToken: updateToken,
            channelID: channelID,
            now: now
        )
        activity.settle(now: now, configuration: configuration)
        activities[activityID] = ActivityState(activity: activity)
        if let channelID { channels[channelID]?.channel.subscriberIDs.append(activityID) }
        device.device.activityIDs.append(activityID)
        devices[deviceID] = device
        return DeviceVerdict(outcome: .applied)
    }

    /// Why a start push starts nothing on any device (its aps, event, attributes-type, attributes
    /// or alert); `nil` when it could start an activity.
    private static func startPayloadProblem(_ payload: PushPayload?, attributesType: String) -> String? {
        guard let aps = payload?.aps else { return "no aps dictionary" }
        guard case .string("start")? = aps["event"] else { return "a push-to-start token takes start events only" }
        guard case .string(let pushedType)? = aps["attributes-type"], pushedType == attributesType else {
            return "attributes-type does not match the token's \(attributesType)"
        }
        guard let attributesMember = aps.members.last(where: { $0.key == "attributes" }),
            aps.bytes[attributesMember.range.lowerBound] == UInt8(ascii: "{")
        else {
            return "a start needs attributes"
        }
        guard aps.contains("alert") else { return "a start needs an alert" }
        return nil
    }

    /// The activity a start makes, as its payload describes it.
    private static func startedActivity(
        id activityID: String,
        deviceID: String,
        device: EmulatedDevice,
        environment: APNSEnvironment,
        attributesType: String,
        aps: APSDictionary,
        updateToken: String?,
        channelID: String?,
        now: Date
    ) -> EmulatedActivity {
        EmulatedActivity(
            id: activityID,
            deviceID: deviceID,
            environment: environment,
            bundleID: device.bundleID,
            attributesType: attributesType,
            attributes: aps["attributes"] ?? .object(JSONObject()),
            contentState: aps["content-state"],
            phase: .active,
            updateToken: updateToken,
            channelID: channelID,
            startedAt: now,
            staleDate: Self.date(aps["stale-date"]),
            endedAt: nil,
            dismissalDate: nil,
            lastTimestamp: Self.seconds(aps["timestamp"]),
            relevanceScore: Self.double(aps["relevance-score"]),
            lastAlert: aps["alert"],
            updatesApplied: 0,
            updatesIgnored: 0
        )
    }

    /// Holds a push for an offline device, replacing any push held before: APNs keeps one.
    private mutating func hold(
        _ push: AcceptedDevicePush,
        now: Date,
        configuration: APNSEmulatorConfiguration
    ) -> DeviceVerdict {
        guard push.expiration != 0 else {
            return DeviceVerdict(
                outcome: .ignored("the device is offline and apns-expiration 0 asks APNs not to keep the push")
            )
        }
        let expiresAt =
            push.expiration.map { Date(timeIntervalSince1970: TimeInterval($0)) }
            ?? now.addingTimeInterval(configuration.offlineStorageDuration)
        guard expiresAt > now else {
            return DeviceVerdict(outcome: .ignored("the device is offline and apns-expiration has passed"))
        }
        let deviceID = push.target.deviceID
        if let replaced = devices[deviceID]?.heldPush {
            recordLaterOutcome(
                .ignored("discarded while the device was offline: APNs keeps only the newest push"),
                of: replaced
            )
        }
        devices[deviceID]?.heldPush = HeldPush(
            target: push.target,
            payload: push.payload,
            priority: push.priority,
            expiresAt: expiresAt,
            historyKey: push.token,
            requestID: push.requestID
        )
        return DeviceVerdict(
            outcome: .stored("the device is offline; APNs keeps the push until \(Self.text(expiresAt))")
        )
    }

    /// The device goes offline or comes back. Back online, it gets the push APNs held for it and,
    /// for each of its activities that missed broadcasts, its channel's stored message, if they
    /// have not expired; what became of each is added to the push's history entry.
    mutating func setOnline(
        _ online: Bool,
        deviceID: String,
        now: Date,
        environment: APNSEnvironment,
        configuration: APNSEmulatorConfiguration
    ) throws(EmulatorError) {
        guard var state = devices[deviceID] else { throw .unknownDevice(id: deviceID) }
        let wasOnline = state.device.isOnline
        state.device.isOnline = online
        let held = online ? state.heldPush : nil
        if online { state.heldPush = nil }
        devices[deviceID] = state
        guard online, !wasOnline else { return }

        if let held, let target = held.target {
            if held.expiresAt <= now {
                recordLaterOutcome(.ignored("expired while the device was offline"), of: held)
            } else if case .live = lookUp(token: held.historyKey, now: now, configuration: configuration) {
                let verdict = deliverNow(
                    to: target,
                    payload: held.payload,
                    priority: held.priority,
                    now: now,
                    environment: environment,
                    configuration: configuration
                )
                recordLaterOutcome(verdict.outcome, of: held)
            } else {
                recordLaterOutcome(.ignored("the token was no longer valid when the device came back"), of: held)
            }
        }
        for activityID in state.device.activityIDs {
            guard var activity = activities[activityID], activity.missedChannelMessage else { continue }
            activity.missedChannelMessage = false
            guard let channelID = activity.activity.channelID, let message = channels[channelID]?.storedMessage,
                message.expiresAt > now
            else {
                activities[activityID] = activity
                continue
            }
            let context = UpdateContext(
                priority: message.priority,
                countsAgainstBudget: false,
                now: now,
                configuration: configuration
            )
            let verdict = Self.apply(ActivityUpdateFields(message.payload), to: &activity, context: context)
            if case .applied = verdict.outcome, activity.activity.endedAt != nil { unsubscribe(activity.activity) }
            activities[activityID] = activity
            recordLaterOutcome(verdict.outcome, of: message)
        }
    }

    private static func text(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// How one update is delivered: its priority, whether it counts against the activity's
    /// priority-10 budget (device pushes do, broadcasts do not), and the device's clock and rules.
    struct UpdateContext {
        let priority: APNSPriority
        let countsAgainstBudget: Bool
        let now: Date
        let configuration: APNSEmulatorConfiguration
    }

    /// Applies an `update` or `end` to one activity with the device's rules: ended activities ignore
    /// pushes, a `timestamp` not newer than the last applied one is ignored, priority 10 counts
    /// against the hourly budget when the context says so.
    private static func apply(
        _ update: ActivityUpdateFields,
        to state: inout ActivityState,
        context: UpdateContext
    ) -> DeviceVerdict {
        state.activity.settle(now: context.now, configuration: context.configuration)
        let verdict = verdictForUpdate(update, to: &state, context: context)
        if case .ignored = verdict.outcome {
            state.activity.updatesIgnored += 1
        } else {
            state.activity.updatesApplied += 1
        }
        state.activity.settle(now: context.now, configuration: context.configuration)
        return verdict
    }

    private static func verdictForUpdate(
        _ update: ActivityUpdateFields,
        to state: inout ActivityState,
        context: UpdateContext
    ) -> DeviceVerdict {
        let now = context.now
        let configuration = context.configuration
        guard state.activity.endedAt == nil else { return DeviceVerdict(outcome: .ignored("the activity has ended")) }
        if let refusal = update.refusal { return DeviceVerdict(outcome: .ignored(refusal)) }
        let timestamp = update.timestamp
        if let timestamp, let last = state.activity.lastTimestamp, timestamp <= last {
            return DeviceVerdict(outcome: .ignored("timestamp \(timestamp) is not newer than \(last)"))
        }
        if context.countsAgainstBudget, context.priority == .immediate,
            let budget = configuration.priorityTenBudgetPerHour,
            !state.priorityTenUpdates.admit(at: now, limit: budget, window: 3600)
        {
            return DeviceVerdict(outcome: .ignored("priority-10 budget exhausted"), overBudget: true)
        }
        if let contentState = update.contentState { state.activity.contentState = contentState }
        if let staleDate = update.staleDate { state.activity.staleDate = staleDate }
        if let relevance = update.relevanceScore { state.activity.relevanceScore = relevance }
        if let alert = update.alert { state.activity.lastAlert = alert }
        if let timestamp { state.activity.lastTimestamp = timestamp }
        if update.isEnd {
            state.activity.endedAt = now
            if let requested = update.dismissalDate {
                // A past dismissal date removes the activity at once; the Lock Screen keeps it 4 h at most.
                let latest = now.addingTimeInterval(configuration.lockScreenWindow)
                state.activity.dismissalDate = max(now, min(requested, latest))
            }
        }
        return DeviceVerdict(outcome: .applied)
    }

    static func seconds(_ value: JSONValue?) -> Int64? {
        switch value {
        case .integer(let integer)?: integer
        case .number(let number)? where number.isFinite && abs(number) < 9e15: Int64(number.rounded(.down))
        default: nil
        }
    }

    static func double(_ value: JSONValue?) -> Double? {
        switch value {
        case .integer(let integer)?: Double(integer)
        case .number(let number)?: number
        default: nil
        }
    }

    static func date(_ value: JSONValue?) -> Date? {
        seconds(value).map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }
}
