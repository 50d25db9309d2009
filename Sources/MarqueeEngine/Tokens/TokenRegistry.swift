import Foundation
import Logging
import MarqueeCore

/// Push-to-start tokens and activities' update tokens, as devices report them.
public struct TokenRegistry: Sendable {
    let store: any ActivityStore & PendingStartStore & PresenceStore & TokenStore
    let clock: any WallClock
    let logger: Logger
    /// The most registrations one batch may carry.
    public let maximumBatchSize: Int
    /// Told when a registration queued late joiners (`LateJoinPump`).
    let lateJoinWakeup: JobWakeup
    /// Single devices' registrations, written together while the store is busy.
    let singles: RegistrationCoalescer

    /// `registrationWriters`: how many statements of single registrations may be in flight at once
    /// (`RegistrationCoalescer`); registrations arriving while all are busy share the next.
    public init(
        store: any MarqueeStore,
        maximumBatchSize: Int,
        registrationWriters: Int = 2,
        lateJoinWakeup: JobWakeup? = nil,
        clock: any WallClock,
        logger: Logger
    ) {
        let lateJoinWakeup = lateJoinWakeup ?? JobWakeup(clock: clock)
        self.store = store
        self.maximumBatchSize = max(1, maximumBatchSize)
        self.lateJoinWakeup = lateJoinWakeup
        self.clock = clock
        self.logger = logger
        self.singles = RegistrationCoalescer(
            maximumWriters: registrationWriters,
            maximumBatch: max(1, maximumBatchSize)
        ) { [store, clock, logger] appID, registrations in
            try await Self.persist(
                appID: appID,
                registrations,
                returningTokens: true,
                in: store,
                at: clock.now,
                wakingLateJoiners: lateJoinWakeup,
                logger: logger
            ).tokens
        }
    }

    /// Registers or refreshes tokens, all or none. `pointerPrefix` locates each registration in the
    /// request (`/tokens` for a batch, empty for a single token). A registration naming a device ID
    /// the app knows under another token rotates that device's row to the new token
    /// (`TokenStore.upsertPushToStartTokens`): the device keeps its starts and reports. In the same
    /// unit each token is queued for the start of every live event whose late joiners it is among
    /// (`TokenStore.registerPushToStartTokens`), and the late-join pump is woken. Returns how many
    /// registrations were written.
    @discardableResult
    public func register(
        app: App,
        _ registrations: [PushToStartRegistration],
        pointerPrefix: String
    ) async throws -> Int {
        try await write(app: app, registrations, pointerPrefix: pointerPrefix, returningTokens: false).written
    }

    /// Registers or refreshes one token (as `register`) and answers its row as written. Its own
    /// field errors point at the request's path parameter (`/token`). Registrations of single
    /// devices that arrive while the store is busy share a statement (`RegistrationCoalescer`).
    public func register(app: App, _ registration: PushToStartRegistration) async throws -> PushToStartToken {
        let normalized: [PushToStartRegistration]
        do {
            normalized = try validated(app: app, [registration], pointerPrefix: "")
        } catch EngineError.invalidInput(let fields) {
            throw EngineError.invalidInput(fields.map { $0.pointer == "/token" ? FieldError("token", $0.detail) : $0 })
        }
        guard let token = try await singles.register(appID: app.id, normalized[0]) else {
            throw EngineError.notFound(
                resource: "push-to-start token",
                id: PushTokenRedaction.redacted(registration.token)
            )
        }
        return token
    }

    private func write(
        app: App,
        _ registrations: [PushToStartRegistration],
        pointerPrefix: String,
        returningTokens: Bool
    ) async throws -> TokenRegistrationOutcome {
        try await Self.persist(
            appID: app.id,
            validated(app: app, registrations, pointerPrefix: pointerPrefix),
            returningTokens: returningTokens,
            in: store,
            at: clock.now,
            wakingLateJoiners: lateJoinWakeup,
            logger: logger
        )
    }

    /// The registrations as the store takes them (tokens in lower case), or the input's errors.
    private func validated(
        app: App,
        _ registrations: [PushToStartRegistration],
        pointerPrefix: String
    ) throws -> [PushToStartRegistration] {
        var validation = InputValidation()
        if registrations.count > maximumBatchSize {
            validation.add(
                FieldError(
                    pointerPrefix,
                    "a batch carries at most \(maximumBatchSize) tokens (got \(registrations.count))"
                )
            )
            try validation.check()
        }
        validation.require(!registrations.isEmpty, pointerPrefix, "must carry at least one token")
        var normalized: [PushToStartRegistration] = []
        normalized.reserveCapacity(registrations.count)
        for (index, registration) in registrations.enumerated() {
            let pointer = pointerPrefix.isEmpty ? "" : "\(pointerPrefix)/\(index)"
            TokenRules.validate(registration, app: app, pointer: pointer, into: &validation)
            var registration = registration
            registration.token = registration.token.lowercased()
            registration.deviceToken = registration.deviceToken?.lowercased()
            normalized.append(registration)
        }
        try validation.check()
        return normalized
    }

    /// Writes validated registrations and wakes the late-join pump if they queued late joiners.
    private static func persist(
        appID: AppID,
        _ registrations: [PushToStartRegistration],
        returningTokens: Bool,
        in store: any TokenStore,
        at now: Date,
        wakingLateJoiners lateJoinWakeup: JobWakeup,
        logger: Logger
    ) async throws -> TokenRegistrationOutcome {
        let outcome = try await store.registerPushToStartTokens(
            appID: appID,
            registrations,
            at: now,
            returningTokens: returningTokens
        )
        if outcome.lateJoinersQueued > 0 {
            lateJoinWakeup.signal()
            logger.debug("late joiners queued", metadata: ["late_joiners.queued": "\(outcome.lateJoinersQueued)"])
        }
        return outcome
    }

    public func token(
        app: App,
        environment: APNSEnvironment,
        attributesType: String,
        token: String
    ) async throws -> PushToStartToken {
        guard
            let found = try await store.pushToStartToken(
                appID: app.id,
                environment: environment,
                attributesType: attributesType,
                token: token.lowercased()
            )
        else {
            throw EngineError.notFound(resource: "push-to-start token", id: PushTokenRedaction.redacted(token))
        }
        return found
    }

    public func unregister(app: App, environment: APNSEnvironment, attributesType: String, token: String) async throws {
        guard
            try await store.deletePushToStartToken(
                appID: app.id,
                environment: environment,
                attributesType: attributesType,
                token: token.lowercased()
            )
        else {
            throw EngineError.notFound(resource: "push-to-start token", id: PushTokenRedaction.redacted(token))
        }
    }

    /// APNs answered 410 for the token: it is retired only if APNs saw it invalid after its last
    /// registration (a device that registered again since has a token that works).
    @discardableResult
    public func recordInvalidation(app: App, tokenRowID: Int64, _ invalidation: TokenInvalidation) async throws -> Bool
    {
        let retired = try await store.invalidatePushToStartToken(appID: app.id, rowID: tokenRowID, invalidation)
        logger.debug(
            retired ? "push-to-start token retired" : "410 older than the token's last registration: kept",
            metadata: ["token.row": "\(tokenRowID)", "apns.reason": "\(invalidation.reason.reasonString)"]
        )
        return retired
    }

    // MARK: Activities

    /// Records an activity's update token (on its first report, adopting the record its start
    /// created when `pushToStartToken` names it, or creating one); a new token retires the
    /// previous one. `frequentPushesEnabled` is what the app reports now; without it the activity
    /// keeps its flag, and an adopted record takes its push-to-start token's.
    public func putUpdateToken(
        app: App,
        activityID: String,
        event: Event,
        environment: APNSEnvironment,
        token: String,
        pushToStartToken: String? = nil,
        frequentPushesEnabled: Bool? = nil
    ) async throws -> Activity {
        try Self.validateUpdateToken(
            app: app,
            activityID: activityID,
            event: event,
            environment: environment,
            token: token,
            pushToStartToken: pushToStartToken
        )
        let now = clock.now
        let (activity, frequentPushesEnabled) = try await reportingActivity(
            app: app,
            activityID: activityID,
            event: event,
            environment: environment,
            pushToStartToken: pushToStartToken,
            frequentPushesEnabled: frequentPushesEnabled,
            at: now
        )
        if let device = activity.pushToStartTokenRowID {
            // A push-started activity that reports its update token is on the device: its word,
            // as a `showing` report (Marquee's inference, so the device's report bound does not
            // count it).
            _ = try await store.recordPresence(
                appID: app.id,
                eventID: event.id,
                tokenRowID: device,
                PresenceReport(environment: environment, state: .showing, activityID: activityID),
                bound: nil,
                at: now
            )
        }
        return try await store.recordUpdateToken(
            appID: app.id,
            id: activity.id,
            activityID: activityID,
            token: token.lowercased(),
            frequentPushesEnabled: frequentPushesEnabled ?? activity.frequentPushesEnabled,
            at: now
        )
    }

    /// A report's fields as the API refuses them: the activity ID, the environments, the tokens' hex.
    private static func validateUpdateToken(
        app: App,
        activityID: String,
        event: Event,
        environment: APNSEnvironment,
        token: String,
        pushToStartToken: String?
    ) throws(EngineError) {
        var validation = InputValidation()
        validation.require(
            EventKeyRule.isKeyLike(activityID),
            "activityID",
            "must be ActivityKit's Activity.id (1–200 letters, digits, '.', '_', '-' and ':')"
        )
        validation.require(
            app.environments.contains(environment),
            "/environment",
            "the app does not use the \(environment) environment"
        )
        validation.require(
            event.environments.contains(environment),
            "/environment",
            "event \(event.externalKey) has no \(environment) channel"
        )
        if let error = TokenRules.checkHex(token, pointer: "/token") { validation.add(error) }
        if let pushToStartToken, let error = TokenRules.checkHex(pushToStartToken, pointer: "/pushToStartToken") {
            validation.add(error)
        }
        try validation.check()
    }

    /// The activity a report names: its record, the one its start created (adopted by its
    /// push-to-start token, whose frequent-pushes flag it takes unless the report says), or a new
    /// one; with the frequent-pushes flag the report leaves it.
    private func reportingActivity(
        app: App,
        activityID: String,
        event: Event,
        environment: APNSEnvironment,
        pushToStartToken: String?,
        frequentPushesEnabled: Bool?,
        at now: Date
    ) async throws -> (Activity, Bool?) {
        var activity = try await store.activity(appID: app.id, activityID: activityID)
        if let existing = activity, existing.eventID != event.id || existing.environment != environment {
            throw EngineError.conflict("activity \(activityID) belongs to another event or environment")
        }
        var frequentPushesEnabled = frequentPushesEnabled
        if activity == nil, let pushToStartToken {
            activity = try await store.startingActivity(
                appID: app.id,
                eventID: event.id,
                environment: environment,
                pushToStartToken: pushToStartToken.lowercased()
            )
            if activity != nil, frequentPushesEnabled == nil {
                frequentPushesEnabled = try await store.pushToStartToken(
                    appID: app.id,
                    environment: environment,
                    attributesType: event.attributesType,
                    token: pushToStartToken.lowercased()
                )?.frequentPushesEnabled
            }
        }
        if activity == nil {
            let record = Activity(
                appID: app.id,
                eventID: event.id,
                environment: environment,
                activityID: activityID,
                state: .active,
                frequentPushesEnabled: frequentPushesEnabled ?? false,
                createdAt: now
            )
            do {
                try await store.recordActivity(record)
                activity = record
            } catch StoreError.duplicate {
                activity = try await store.activity(appID: app.id, activityID: activityID)  // a racing report won
            }
        }
        guard let activity else { throw EngineError.notFound(resource: "activity", id: activityID) }
        return (activity, frequentPushesEnabled)
    }

    public func activity(app: App, activityID: String) async throws -> Activity {
        guard let activity = try await store.activity(appID: app.id, activityID: activityID) else {
            throw EngineError.notFound(resource: "activity", id: activityID)
        }
        return activity
    }

    /// The activity ended on the device: its update token is not pushed to again.
    public func unregisterActivity(app: App, activityID: String) async throws {
        let activity = try await activity(app: app, activityID: activityID)
        _ = try await store.setActivityState(appID: app.id, id: activity.id, state: .ended, at: clock.now)
    }
}
