import Foundation
import MarqueeAPI
import MarqueeCore
import MarqueeEngine

extension Components.Schemas.Environment {
    init(_ environment: APNSEnvironment) {
        switch environment {
        case .sandbox: self = .sandbox
        case .production: self = .production
        }
    }

    var domain: APNSEnvironment {
        switch self {
        case .sandbox: .sandbox
        case .production: .production
        }
    }
}

extension Components.Schemas.StoragePolicy {
    init(_ policy: MessageStoragePolicy) {
        switch policy {
        case .noMessageStored: self = .noStorage
        case .mostRecentMessageStored: self = .mostRecentMessage
        }
    }

    var domain: MessageStoragePolicy {
        switch self {
        case .noStorage: .noMessageStored
        case .mostRecentMessage: .mostRecentMessageStored
        }
    }
}

extension Components.Schemas.Role {
    init(_ role: APIKeyRole) {
        switch role {
        case .admin: self = .admin
        case .publisher: self = .publisher
        case .app: self = .app
        }
    }

    var domain: APIKeyRole {
        switch self {
        case .admin: .admin
        case .publisher: .publisher
        case .app: .app
        }
    }
}

extension Components.Schemas.App {
    init(_ app: App, signingKey: SigningKey?) {
        self.init(
            id: PublicID.app(app.id),
            name: app.name,
            bundleID: app.bundleID,
            teamID: app.teamID,
            environments: app.environments.sortedForDisplay.map(Components.Schemas.Environment.init),
            signingKey: signingKey.map(Components.Schemas.SigningKey.init),
            createdAt: app.createdAt
        )
    }
}

extension Components.Schemas.SigningKey {
    init(_ key: SigningKey) {
        self.init(
            keyID: key.keyID,
            teamID: key.teamID,
            environments: key.environments.sortedForDisplay.map(Components.Schemas.Environment.init),
            createdAt: key.createdAt
        )
    }
}

extension Components.Schemas.APIKey {
    init(_ key: APIKey) {
        self.init(
            id: PublicID.apiKey(key.id),
            role: .init(key.role),
            prefix: key.prefix,
            label: key.label,
            createdAt: key.createdAt,
            revokedAt: key.revokedAt
        )
    }
}

extension Components.Schemas.Channel {
    init(_ channel: BroadcastChannel, eventKey: String?) {
        self.init(
            id: PublicID.channel(channel.id),
            eventKey: eventKey,
            environment: .init(channel.environment),
            channelID: channel.apnsChannelID,
            storagePolicy: .init(channel.storagePolicy),
            state: .init(channel.state),
            createdAt: channel.createdAt,
            updatedAt: channel.updatedAt
        )
    }
}

extension Components.Schemas.ChannelState {
    init(_ state: ChannelState) {
        switch state {
        case .creating: self = .creating
        case .active: self = .active
        case .deleting: self = .deleting
        case .deleted: self = .deleted
        case .orphaned: self = .orphaned
        }
    }

    var domain: ChannelState {
        switch self {
        case .creating: .creating
        case .active: .active
        case .deleting: .deleting
        case .deleted: .deleted
        case .orphaned: .orphaned
        }
    }
}

extension Components.Schemas.EventState {
    init(_ state: EventState) {
        switch state {
        case .scheduled: self = .scheduled
        case .live: self = .live
        case .ended: self = .ended
        case .cancelled: self = .cancelled
        }
    }

    var domain: EventState {
        switch self {
        case .scheduled: .scheduled
        case .live: .live
        case .ended: .ended
        case .cancelled: .cancelled
        }
    }
}

extension Components.Schemas.Event {
    init(_ view: EventView) {
        let event = view.event
        self.init(
            id: PublicID.event(event.id),
            eventKey: event.externalKey,
            title: event.title,
            attributesType: event.attributesType,
            environments: event.environments.sortedForDisplay.map(Components.Schemas.Environment.init),
            storagePolicy: .init(event.storagePolicy),
            priorityPolicy: event.priorityPolicy.map(Components.Schemas.PriorityPolicy.init),
            plannedStart: event.plannedStart,
            plannedEnd: event.plannedEnd,
            timeline: event.timeline.map { Components.Schemas.EventTimeline($0, durations: view.timelineDurations) },
            lateJoiners: event.lateJoiners,
            state: .init(event.state),
            channels: view.channels.map { Components.Schemas.Channel($0, eventKey: event.externalKey) },
            createdAt: event.createdAt,
            updatedAt: event.updatedAt
        )
    }
}

extension Components.Schemas.EventChannel {
    /// The channel-ID read's answer (`ChannelReadMiddleware` writes the same for GET).
    init(_ view: EventChannelView) {
        let channel = view.channel
        self.init(
            eventKey: view.event.externalKey,
            environment: .init(channel.environment),
            channelID: channel.apnsChannelID ?? "",
            storagePolicy: .init(channel.storagePolicy),
            state: .init(channel.state),
            createdAt: channel.createdAt,
            expiresAt: view.expiresAt
        )
    }
}

extension Components.Schemas.PushToStartToken {
    init(_ token: PushToStartToken) {
        self.init(
            token: token.token,
            environment: .init(token.environment),
            attributesType: token.attributesType,
            deviceID: token.deviceID,
            userID: token.userID,
            tags: token.tags,
            iosVersion: token.iosVersion,
            frequentPushesEnabled: token.frequentPushesEnabled,
            firstRegisteredAt: token.firstRegisteredAt,
            lastRegisteredAt: token.lastRegisteredAt,
            valid: token.isValid,
            invalidatedAt: token.invalidatedAt,
            invalidationReason: token.invalidationReason?.reasonString,
            deviceToken: token.deviceToken
        )
    }
}

extension Components.Schemas.Activity {
    init(_ activity: Activity, eventKey: String) {
        let state: Components.Schemas.Activity.StatePayload =
            switch activity.state {
            case .starting: .starting
            case .active: .active
            case .ended: .ended
            }
        self.init(
            activityID: activity.activityID ?? "",
            eventKey: eventKey,
            environment: .init(activity.environment),
            state: state,
            updateToken: activity.currentUpdateToken.map { PushTokenRedaction.redacted($0) },
            frequentPushesEnabled: activity.frequentPushesEnabled,
            createdAt: activity.createdAt,
            updatedAt: activity.updatedAt
        )
    }
}

extension Set where Element == APNSEnvironment {
    /// Environments in a stable order for answers.
    var sortedForDisplay: [APNSEnvironment] { sorted { $0.rawValue < $1.rawValue } }
}

extension Components.Schemas.BroadcastEvent {
    init(_ event: BroadcastEvent) {
        switch event {
        case .update: self = .update
        case .end: self = .end
        }
    }

    var domain: BroadcastEvent {
        switch self {
        case .update: .update
        case .end: .end
        }
    }
}

extension Components.Schemas.BroadcastResult {
    init(_ report: BroadcastReport) {
        self.init(
            eventKey: report.event.externalKey,
            event: .init(report.kind),
            results: report.results.map(Components.Schemas.BroadcastChannelResult.init)
        )
    }
}

extension Components.Schemas.BroadcastChannelResult {
    /// The same fields a scheduled broadcast's outcome keeps (one mapping for both answers), and
    /// the job that carries the broadcast to activities on update tokens.
    init(_ result: EnvironmentBroadcast) {
        self.init(ScheduledBroadcastResult(result))
        activityUpdates = result.activityUpdates.map { queued in
            let id = PublicID.job(queued.jobID)
            return .init(jobID: id, total: queued.total, href: "/v1/jobs/\(id)")
        }
    }
}

extension Components.Schemas.BroadcastLogItem {
    init(_ entry: BroadcastLogEntry) {
        self.init(
            apnsRequestID: entry.apnsRequestID.lowercasedText,
            apnsUniqueID: entry.apnsUniqueID,
            event: .init(entry.event),
            priority: entry.priority.rawValue,
            downgraded: entry.downgraded,
            timestamp: entry.timestamp,
            status: entry.status,
            apnsReason: entry.reason?.reasonString,
            latencyMicroseconds: entry.latencyMicroseconds,
            sentAt: entry.sentAt,
            scheduleID: entry.scheduleID.map(PublicID.schedule),
            contentState: entry.contentState.flatMap { JSONPassThrough.decoded($0) },
            alert: entry.alert.flatMap { JSONPassThrough.decoded($0) }
        )
    }
}

extension PriorityPolicy {
    init(_ policy: Components.Schemas.PriorityPolicy) {
        switch policy {
        case .standard: self = .standard
        case .immediate: self = .immediate
        case .normal: self = .normal
        }
    }
}

extension Components.Schemas.PriorityPolicy {
    init(_ policy: PriorityPolicy) {
        switch policy {
        case .standard: self = .standard
        case .immediate: self = .immediate
        case .normal: self = .normal
        }
    }
}
