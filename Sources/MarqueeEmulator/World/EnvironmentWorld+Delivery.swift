import Foundation
import MarqueeCore

/// A device's verdict on one push: what it did, and whether a device-side budget was exceeded
/// (which the emulator may be configured to answer with 429).
struct DeviceVerdict: Sendable {
    var outcome: DeliveryOutcome
    var overBudget = false
}

extension EnvironmentWorld {
    /// Delivers an accepted device push to what its token stands for, as the device would treat it.
    mutating func deliverDevicePush(
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
            guard var state = activities[activityID] else { return DeviceVerdict(outcome: .ignored("no such activity")) }
            let context = UpdateContext(priority: priority, countsAgainstBudget: true, now: now, configuration: configuration)
            let verdict = Self.apply(payload: payload, to: &state, context: context)
            if case .applied = verdict.outcome, state.activity.endedAt != nil { unsubscribe(state.activity) }
            activities[activityID] = state
            return verdict
        }
    }

    /// Delivers an accepted broadcast to every activity subscribed to `channelID`.
    mutating func deliverBroadcast(
        channelID: String,
        payload: PushPayload?,
        priority: APNSPriority,
        now: Date,
        configuration: APNSEmulatorConfiguration
    ) -> [DeliveryOutcome] {
        guard var channel = channels[channelID] else { return [] }
        channel.channel.broadcastsReceived += 1
        let context = UpdateContext(priority: priority, countsAgainstBudget: false, now: now, configuration: configuration)
        var outcomes: [DeliveryOutcome] = []
        var stillSubscribed: [String] = []
        for activityID in channel.channel.subscriberIDs {
            guard var state = activities[activityID] else { continue }
            let verdict = Self.apply(payload: payload, to: &state, context: context)
            outcomes.append(verdict.outcome)
            if state.activity.endedAt == nil { stillSubscribed.append(activityID) }
            activities[activityID] = state
        }
        channel.channel.subscriberIDs = stillSubscribed
        channels[channelID] = channel
        return outcomes
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
        guard let aps = payload?.aps else { return DeviceVerdict(outcome: .ignored("no aps dictionary")) }
        guard case .string("start")? = aps["event"] else {
            return DeviceVerdict(outcome: .ignored("a push-to-start token takes start events only"))
        }
        guard case .string(let pushedType)? = aps["attributes-type"], pushedType == attributesType else {
            return DeviceVerdict(outcome: .ignored("attributes-type does not match the token's \(attributesType)"))
        }
        guard let attributesMember = aps.members.last(where: { $0.key == "attributes" }),
            aps.bytes[attributesMember.range.lowerBound] == UInt8(ascii: "{")
        else {
            return DeviceVerdict(outcome: .ignored("a start needs attributes"))
        }
        guard aps.contains("alert") else { return DeviceVerdict(outcome: .ignored("a start needs an alert")) }

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

        if let budget = configuration.pushToStartBudget {
            device.recentStarts.removeAll { now.timeIntervalSince($0) >= configuration.pushToStartWindow }
            if device.recentStarts.count >= budget {
                devices[deviceID] = device
                return DeviceVerdict(outcome: .ignored("push-to-start budget exhausted"), overBudget: true)
            }
            device.recentStarts.append(now)
        }

        let attributes = aps["attributes"] ?? .object(JSONObject())
        let activityID = RandomIdentifiers.uuid()
        var updateToken: String?
        if issuesToken {
            let token = RandomIdentifiers.token()
            tokens[token] = .update(deviceID: deviceID, activityID: activityID)
            updateToken = token
        }
        var activity = EmulatedActivity(
            id: activityID,
            deviceID: deviceID,
            environment: environment,
            bundleID: device.device.bundleID,
            attributesType: attributesType,
            attributes: attributes,
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
        activity.settle(now: now, configuration: configuration)
        activities[activityID] = ActivityState(activity: activity)
        if let channelID { channels[channelID]?.channel.subscriberIDs.append(activityID) }
        device.device.activityIDs.append(activityID)
        devices[deviceID] = device
        return DeviceVerdict(outcome: .applied)
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
    private static func apply(payload: PushPayload?, to state: inout ActivityState, context: UpdateContext) -> DeviceVerdict {
        state.activity.settle(now: context.now, configuration: context.configuration)
        let verdict = verdictForUpdate(payload: payload, to: &state, context: context)
        if case .ignored = verdict.outcome { state.activity.updatesIgnored += 1 } else { state.activity.updatesApplied += 1 }
        state.activity.settle(now: context.now, configuration: context.configuration)
        return verdict
    }

    private static func verdictForUpdate(payload: PushPayload?, to state: inout ActivityState, context: UpdateContext) -> DeviceVerdict {
        let now = context.now
        let configuration = context.configuration
        guard state.activity.endedAt == nil else { return DeviceVerdict(outcome: .ignored("the activity has ended")) }
        guard let aps = payload?.aps else { return DeviceVerdict(outcome: .ignored("no aps dictionary")) }
        let isEnd: Bool
        switch aps["event"] {
        case .string("update")?: isEnd = false
        case .string("end")?: isEnd = true
        case .string("start")?: return DeviceVerdict(outcome: .ignored("a running activity cannot be started again"))
        default: return DeviceVerdict(outcome: .ignored("event must be update or end"))
        }
        let timestamp = seconds(aps["timestamp"])
        if let timestamp, let last = state.activity.lastTimestamp, timestamp <= last {
            return DeviceVerdict(outcome: .ignored("timestamp \(timestamp) is not newer than \(last)"))
        }
        if context.countsAgainstBudget, context.priority == .immediate, let budget = configuration.priorityTenBudgetPerHour {
            state.recentPriorityTen.removeAll { now.timeIntervalSince($0) >= 3600 }
            guard state.recentPriorityTen.count < budget else {
                return DeviceVerdict(outcome: .ignored("priority-10 budget exhausted"), overBudget: true)
            }
            state.recentPriorityTen.append(now)
        }
        if let contentState = aps["content-state"] { state.activity.contentState = contentState }
        if let staleDate = date(aps["stale-date"]) { state.activity.staleDate = staleDate }
        if let relevance = double(aps["relevance-score"]) { state.activity.relevanceScore = relevance }
        if let alert = aps["alert"] { state.activity.lastAlert = alert }
        if let timestamp { state.activity.lastTimestamp = timestamp }
        if isEnd {
            state.activity.endedAt = now
            if let requested = date(aps["dismissal-date"]) {
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
