import Foundation

/// What an app calls: it forwards ActivityKit's tokens and Marquee's background pushes here, and
/// the client registers what changed, reports what ActivityKit shows, and ends a second activity
/// of an event. The decisions are `ActivityCensus`', `TokenLedger`'s and `RetryPolicy`'s; this
/// type only sends what they decide and remembers what Marquee accepted.
public actor MarqueeKitClient {
    public nonisolated let configuration: MarqueeKitConfiguration
    private let transport: any MarqueeTransport
    private let host: any ActivityHost
    private let requests: MarqueeRequests
    private let stateStore: (any MarqueeKitStateStore)?
    private let now: @Sendable () -> Date
    private let sleep: @Sendable (Duration) async throws -> Void
    private let randomFraction: @Sendable () -> Double
    private var state: MarqueeKitState
    /// The work in progress per lane: the push-to-start registration, each activity's update
    /// token, presence. Each lane runs one thing at a time, in order, so that two calls with the
    /// same token (ActivityKit's stream and a launch) send it once, and a rotation never lands
    /// before the registration it replaces.
    private var laneTails: [String: Task<Void, Never>] = [:]
    /// Second activities this client ended: their update tokens are not registered.
    private var endedActivityIDs: Set<String> = []

    /// - Parameters:
    ///   - transport: `URLSessionTransport` by default.
    ///   - activities: where the activities are (`LiveActivityHost` on a device).
    ///   - stateStore: where the state survives launches; none keeps it in memory only.
    ///   - now, sleep, randomFraction: the clock, the wait between attempts, the jitter's source.
    public init(
        configuration: MarqueeKitConfiguration,
        transport: (any MarqueeTransport)? = nil,
        activities: any ActivityHost,
        stateStore: (any MarqueeKitStateStore)? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        randomFraction: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.configuration = configuration
        self.transport = transport ?? URLSessionTransport(timeout: configuration.requestTimeout)
        self.host = activities
        self.requests = MarqueeRequests(
            baseURL: configuration.baseURL,
            appKey: configuration.appKey,
            environment: configuration.environment
        )
        self.stateStore = stateStore
        self.now = now
        self.sleep = sleep
        self.randomFraction = randomFraction
        // A state that cannot be read is started afresh: the worst that costs is one repeat of
        // each registration and report, which Marquee takes as the same.
        self.state = (try? stateStore?.load()) ?? MarqueeKitState()
    }

    /// What the client remembers now (for tests and diagnostics).
    public var currentState: MarqueeKitState { state }

    // MARK: Tokens

    /// ActivityKit's push-to-start token (`Activity<Attributes>.pushToStartTokenUpdates`):
    /// registered when it is new or rotated, with the device token beside it.
    @discardableResult
    public func register(pushToStartToken: Data) async throws(MarqueeKitError) -> RegistrationOutcome {
        state.ledger.noteCurrent(pushToStartToken: pushToStartToken.hexString)
        return try await registerPushToStart()
    }

    /// The app's APNs device token (`didRegisterForRemoteNotificationsWithDeviceToken`): it
    /// travels with the push-to-start token's registration, which is sent again when it changes.
    @discardableResult
    public func register(deviceToken: Data) async throws(MarqueeKitError) -> RegistrationOutcome {
        state.ledger.noteCurrent(deviceToken: deviceToken.hexString)
        return try await registerPushToStart()
    }

    /// An activity's update token (`Activity.pushTokenUpdates`), registered when new or rotated;
    /// Marquee counts its first one as the activity showing.
    @discardableResult
    public func register(
        updateToken: Data,
        activityID: String,
        eventKey: String
    ) async throws(MarqueeKitError) -> RegistrationOutcome {
        let token = updateToken.hexString
        let result = await inLane("update-token/\(activityID)") { client in
            await client.registerUpdateTokenNow(token, activityID: activityID, eventKey: eventKey)
        }
        return try result.get()
    }

    @discardableResult
    private func registerPushToStart() async throws(MarqueeKitError) -> RegistrationOutcome {
        try await inLane("push-to-start") { client in await client.registerPushToStartNow() }.get()
    }

    private func registerPushToStartNow() async -> Result<RegistrationOutcome, MarqueeKitError> {
        guard let token = state.ledger.pushToStartToken else { return .success(.waitingForPushToStartToken) }
        let request: MarqueeHTTPRequest
        do throws(MarqueeKitError) {
            request = try requests.registerPushToStartToken(
                token,
                configuration: configuration,
                deviceToken: state.ledger.deviceToken
            )
        } catch { return .failure(error) }
        if state.ledger.isAccepted(request, for: .pushToStart) { return .success(.unchanged) }
        switch await send(request) {
        case .success:
            state.ledger.recordAccepted(request, for: .pushToStart)
            persist()
            return .success(.registered)
        case .failure(let error):
            return .failure(error)
        }
    }

    private func registerUpdateTokenNow(
        _ token: String,
        activityID: String,
        eventKey: String
    ) async -> Result<RegistrationOutcome, MarqueeKitError> {
        if endedActivityIDs.contains(activityID) { return .success(.secondActivity) }
        let request: MarqueeHTTPRequest
        do throws(MarqueeKitError) {
            request = try requests.registerUpdateToken(
                token,
                activityID: activityID,
                eventKey: eventKey,
                pushToStartToken: state.ledger.pushToStartToken,
                frequentPushesEnabled: configuration.frequentPushesEnabled
            )
        } catch { return .failure(error) }
        let slot = TokenLedger.Slot.updateToken(activityID: activityID)
        if state.ledger.isAccepted(request, for: slot) { return .success(.unchanged) }
        switch await send(request) {
        case .success:
            state.ledger.recordAccepted(request, for: slot)
            // Marquee takes the registration as the activity showing: no report needs to say it again.
            let showing = PresenceReport(eventKey: eventKey, state: .showing, activityID: activityID)
            if state.census.lastReport(for: eventKey) == nil {
                state.census.recordSent(showing, at: now())
            }
            persist()
            return .success(.registered)
        case .failure(let error):
            return .failure(error)
        }
    }

    // MARK: Presence

    /// Marquee's background push (`application(_:didReceiveRemoteNotification:)`'s `userInfo`):
    /// answers its ask with what ActivityKit shows now. Events of the other environment are not
    /// this build's and are left out.
    ///
    /// - Throws: `.notMarquee` for a push that is not Marquee's (handle it as before).
    /// It runs on the main actor, where the app delegate hands the push over, so that `userInfo`
    /// (not `Sendable`) never leaves it: only the parsed push does.
    @MainActor
    public func handleBackgroundPush(
        userInfo: [AnyHashable: Any]
    ) async throws(MarqueeBackgroundPushError) -> ReconcileOutcome {
        let push = try MarqueeBackgroundPush(userInfo: userInfo)
        return await handle(push)
    }

    /// Answers a parsed background push.
    public func handle(_ push: MarqueeBackgroundPush) async -> ReconcileOutcome {
        let asked = push.events.filter { $0.environment == configuration.environment }.map(\.eventKey)
        state.census.ask(about: asked, at: now())
        persist()
        return await reconcile()
    }

    /// Reports what the activity host lists now, as far as it changed or was asked about.
    public func reconcile(liveEvents: Set<String> = []) async -> ReconcileOutcome {
        await reconcile(activities: host.currentActivities(), liveEvents: liveEvents)
    }

    /// Reports presence from `activities` (as ActivityKit lists them, in order) and ends second
    /// activities of an event through the host.
    ///
    /// - Parameter liveEvents: events the app knows are live now (from its own schedule): one
    ///   with no activity here is reported `absent`, once.
    public func reconcile(activities: [ObservedActivity], liveEvents: Set<String> = []) async -> ReconcileOutcome {
        await inLane("presence") { client in
            await client.reconcileNow(activities: activities, liveEvents: liveEvents)
        }
    }

    private func reconcileNow(activities: [ObservedActivity], liveEvents: Set<String>) async -> ReconcileOutcome {
        let decision = state.census.reconcile(activities, liveEvents: liveEvents, now: now())
        state.ledger.keepUpdateTokens(of: Set(activities.map(\.id)))
        persist()
        var outcome = ReconcileOutcome(endedActivityIDs: decision.activitiesToEnd)
        if !decision.activitiesToEnd.isEmpty {
            endedActivityIDs.formUnion(decision.activitiesToEnd)
            await host.end(activityIDs: decision.activitiesToEnd)
        }
        for report in decision.reports {
            switch await sendReport(report) {
            case .success:
                state.census.recordSent(report, at: now())
                persist()
                outcome.sent.append(report)
            case .failure(let error):
                outcome.unsent.append(.init(report: report, error: error))
            }
        }
        return outcome
    }

    /// Sends one report; a 404 means Marquee does not know the push-to-start token (never
    /// registered, or unregistered since): register it and try once more.
    private func sendReport(_ report: PresenceReport) async -> Result<Void, MarqueeKitError> {
        guard let token = state.ledger.pushToStartToken else {
            return .failure(
                .invalidArgument("no push-to-start token yet: presence is reported once ActivityKit hands one over")
            )
        }
        do throws(MarqueeKitError) {
            try await registerPushToStart()
            let request = try requests.reportPresence(report, pushToStartToken: token)
            switch await send(request) {
            case .success:
                return .success(())
            case .failure(.rejected(let rejection)) where rejection.status == 404:
                state.ledger.forget(.pushToStart)
                try await registerPushToStart()
                return await send(request).map { _ in () }
            case .failure(let error):
                return .failure(error)
            }
        } catch {
            return .failure(error)
        }
    }

    // MARK: Sending

    /// Sends `request` until it succeeds or the retry policy gives up; answers other than 2xx
    /// come back as `.rejected`.
    private func send(_ request: MarqueeHTTPRequest) async -> Result<MarqueeHTTPResponse, MarqueeKitError> {
        var attempt = 1
        while true {
            let failure: MarqueeKitError
            do {
                let response = try await transport.send(request)
                if (200..<300).contains(response.status) { return .success(response) }
                failure = .rejected(MarqueeRejection(response))
            } catch {
                failure = .unreachable(String(describing: error))
            }
            guard !Task.isCancelled else { return .failure(failure) }
            switch configuration.retryPolicy.decide(
                after: failure,
                attempt: attempt,
                now: now(),
                randomFraction: randomFraction()
            ) {
            case .giveUp:
                return .failure(failure)
            case .retry(let wait):
                do { try await sleep(wait) } catch { return .failure(failure) }
                attempt += 1
            }
        }
    }

    /// Runs `work` after everything queued before it in `lane`.
    private func inLane<Value: Sendable>(
        _ lane: String,
        _ work: @escaping @Sendable (isolated MarqueeKitClient) async -> Value
    ) async -> Value {
        let previous = laneTails[lane]
        let task = Task<Value, Never> {
            await previous?.value
            return await work(self)
        }
        let tail = Task { _ = await task.value }
        laneTails[lane] = tail
        let value = await task.value
        if laneTails[lane] == tail { laneTails[lane] = nil }
        return value
    }

    /// Saves the state. A failed save costs at most a repeat after the next launch (which Marquee
    /// takes as the same), so it never fails the call that changed the state.
    private func persist() {
        try? stateStore?.save(state)
    }
}
