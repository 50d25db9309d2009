import Foundation
import MarqueeCore

/// What a token in a request path turned out to be.
enum TokenLookup: Sendable {
    case live(TokenTarget, bundleID: String)
    /// Valid once, no longer: APNs answers 410 `Unregistered` with this time (ms since 1970).
    case retired(millisecondsSince1970: Int64)
    /// Never issued in this environment: 400 `BadDeviceToken`.
    case unknown
}

extension EnvironmentWorld {
    mutating func registerDevice(
        environment: APNSEnvironment,
        bundleID: String,
        iOSVersion: IOSVersion,
        pushToStartAttributesTypes: [String]
    ) -> EmulatedDevice {
        let id = RandomIdentifiers.uuid()
        let deviceToken = RandomIdentifiers.token()
        tokens[deviceToken] = .device(deviceID: id)
        var pushToStartTokens: [String: String] = [:]
        for attributesType in pushToStartAttributesTypes {
            let token = RandomIdentifiers.token()
            pushToStartTokens[attributesType] = token
            tokens[token] = .pushToStart(deviceID: id, attributesType: attributesType)
        }
        let device = EmulatedDevice(
            id: id,
            environment: environment,
            bundleID: bundleID,
            iOSVersion: iOSVersion,
            deviceToken: deviceToken,
            pushToStartTokens: pushToStartTokens,
            isAppInstalled: true,
            isOnline: true,
            activityIDs: []
        )
        devices[id] = DeviceState(device: device)
        return device
    }

    /// Issues a new push-to-start token for `attributesType`; the previous one, if any, becomes
    /// `Unregistered` as of `now`.
    mutating func rotatePushToStartToken(
        deviceID: String,
        attributesType: String,
        now: Date
    ) throws(EmulatorError) -> String {
        guard var state = devices[deviceID], state.device.isAppInstalled else { throw .unknownDevice(id: deviceID) }
        if let previous = state.device.pushToStartTokens[attributesType] { retire(previous, at: now) }
        let token = RandomIdentifiers.token()
        state.device.pushToStartTokens[attributesType] = token
        tokens[token] = .pushToStart(deviceID: deviceID, attributesType: attributesType)
        devices[deviceID] = state
        return token
    }

    /// The user turns Live Activities off for the app, or back on. Off, APNs still accepts starts
    /// and nothing shows; activities already there stay (iOS ends them; the emulator leaves that to
    /// their own end).
    mutating func setLiveActivitiesEnabled(_ enabled: Bool, deviceID: String) throws(EmulatorError) {
        guard devices[deviceID] != nil else { throw .unknownDevice(id: deviceID) }
        devices[deviceID]?.device.areLiveActivitiesEnabled = enabled
    }

    /// The app leaves the device: every token it had answers 410 `Unregistered` from `now` on.
    mutating func uninstallApp(deviceID: String, now: Date) throws(EmulatorError) {
        guard var state = devices[deviceID] else { throw .unknownDevice(id: deviceID) }
        guard state.device.isAppInstalled else { return }
        state.device.isAppInstalled = false
        retire(state.device.deviceToken, at: now)
        for token in state.device.pushToStartTokens.values { retire(token, at: now) }
        for activityID in state.device.activityIDs {
            guard var activity = activities[activityID] else { continue }
            if let token = activity.activity.updateToken { retire(token, at: now) }
            if activity.activity.endedAt == nil {
                activity.activity.endedAt = now
                activity.activity.dismissalDate = now
            }
            unsubscribe(activity.activity)
            activities[activityID] = activity
        }
        devices[deviceID] = state
    }

    mutating func retire(_ token: String, at date: Date) {
        tokens[token] = nil
        retiredTokens[token] = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    mutating func unsubscribe(_ activity: EmulatedActivity) {
        guard let channelID = activity.channelID else { return }
        channels[channelID]?.channel.subscriberIDs.removeAll { $0 == activity.id }
    }

    /// Finds what a token stands for now. An update token whose activity ended longer ago than the
    /// configured lifetime is retired on the spot, as of the end of that lifetime.
    mutating func lookUp(token: String, now: Date, configuration: APNSEmulatorConfiguration) -> TokenLookup {
        guard let target = tokens[token] else {
            if let retiredAt = retiredTokens[token] { return .retired(millisecondsSince1970: retiredAt) }
            return .unknown
        }
        guard let device = devices[target.deviceID]?.device else { return .unknown }
        if case .update(_, let activityID) = target, var state = activities[activityID] {
            state.activity.settle(now: now, configuration: configuration)
            activities[activityID] = state
            if let endedAt = state.activity.endedAt {
                let invalidAt = endedAt.addingTimeInterval(configuration.updateTokenLifetimeAfterEnd)
                if now >= invalidAt {
                    retire(token, at: invalidAt)
                    return .retired(millisecondsSince1970: retiredTokens[token] ?? 0)
                }
            }
        }
        return .live(target, bundleID: device.bundleID)
    }

    /// Update tokens the apps would report to their backends: one per live activity that has one.
    func reportedUpdateTokens() -> [ReportedUpdateToken] {
        activities.values.compactMap { state -> ReportedUpdateToken? in
            let activity = state.activity
            guard let token = activity.updateToken, tokens[token] != nil else { return nil }
            return ReportedUpdateToken(
                token: token,
                activityID: activity.id,
                deviceID: activity.deviceID,
                environment: activity.environment,
                bundleID: activity.bundleID,
                attributesType: activity.attributesType,
                issuedAt: activity.startedAt
            )
        }
        .sorted { ($0.issuedAt, $0.token) < ($1.issuedAt, $1.token) }
    }
}

extension EmulatedActivity {
    /// Applies the system's own rules up to `now`: an activity ends after the maximum duration and
    /// its phase follows the stale and dismissal dates.
    mutating func settle(now: Date, configuration: APNSEmulatorConfiguration) {
        if endedAt == nil {
            let systemEnd = startedAt.addingTimeInterval(configuration.maximumActivityDuration)
            if now >= systemEnd { endedAt = systemEnd }
        }
        if let endedAt {
            let removal = dismissalDate ?? endedAt.addingTimeInterval(configuration.lockScreenWindow)
            phase = now >= removal ? .dismissed : .ended
        } else if let staleDate, now >= staleDate {
            phase = .stale
        } else {
            phase = .active
        }
    }
}
