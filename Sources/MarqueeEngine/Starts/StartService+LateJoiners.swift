import Foundation
import Logging
import MarqueeCore

extension StartService {
    /// What became of a group of claimed late joiners.
    enum LateJoinOutcome: Sendable, Hashable {
        /// A start job sends them (its ID); the queue no longer holds them.
        case enqueued(JobID)
        /// Nothing to send: every token has started since (or is gone); the queue no longer holds them.
        case nothingToSend
        /// The event cannot be started for them any more (ended, late joining off, the app's key
        /// gone, the payload too large); the queue no longer holds them.
        case dropped(String)
    }

    /// Starts the late joiners `claims` (pending starts of one event and environment, claimed by
    /// `owner`) as one start job through the fan-out's exactly-once machinery: its audience exactly
    /// their tokens, less those the ledger holds; the offer's attributes, alert and input-push
    /// choice; the event's newest broadcast content-state; the channel active now; a fresh
    /// timestamp. The job is enqueued in the transaction that removes the claims from the queue
    /// (`StoreError.notActive` if the claim lapsed meanwhile: another pump holds them now).
    ///
    /// The claims are all of one reason (and, for `absent`, one source job: `LateJoinPump.groups`).
    /// Late joiners leave out devices whose start of the event ended uncertain: their confirmation
    /// decides for them (under `skip` they are never sent the start again). An `absent` start is
    /// exactly for such devices (their app said no activity is there): it is sent with the
    /// attributes of the start it makes up for and `"reason": "absent"` in its arguments.
    func startLateJoiners(_ claims: [PendingStart], owner: String) async throws -> LateJoinOutcome {
        guard let first = claims.first else { return .nothingToSend }
        let ids = claims.map(\.id)
        let environment = first.environment
        var arguments: StartJobArguments
        let made = first.reason == .absent ? try await absentArguments(first) : try await lateJoinArguments(first)
        switch made {
        case .success(let made):
            arguments = made
        case .failure(let refused):
            try await store.dropPendingStarts(ids, owner: owner)
            logger.notice(
                "late joiners dropped",
                metadata: [
                    "event.id": "\(first.eventID)", "environment": "\(environment.rawValue)",
                    "count": "\(claims.count)",
                    "reason": "\(refused.reason)",
                ]
            )
            return .dropped(refused.reason)
        }
        var sending = claims
        if first.reason == .lateJoin {
            let uncertain = try await store.uncertainStartTokens(
                appID: first.appID,
                eventID: first.eventID,
                among: claims.map(\.tokenRowID)
            )
            sending.removeAll { uncertain.contains($0.tokenRowID) }
        }
        let now = clock.now
        guard !sending.isEmpty else {
            try await store.enqueueJobs([], consumingPendingStarts: ids, owner: owner, at: now)
            return .nothingToSend
        }
        arguments.audience = StartAudience(tokens: sending.map(\.token))
        let jobID = JobID()
        let extent = try await store.audienceExtent(
            arguments.audienceQuery(appID: first.appID, jobID: jobID, afterEarlierRuns: false)
        )
        guard extent.count > 0 else {
            try await store.enqueueJobs([], consumingPendingStarts: ids, owner: owner, at: now)
            return .nothingToSend
        }
        let jobs = startJobs(appID: first.appID, jobID: jobID, arguments: arguments, extent: extent, at: now)
        try await store.enqueueJobs(jobs, consumingPendingStarts: ids, owner: owner, at: now)
        wakeup.signal()
        logger.debug(
            "late-join start job enqueued",
            metadata: [
                "job.id": "\(jobID)", "event.id": "\(first.eventID)", "environment": "\(environment.rawValue)",
                "job.total": "\(extent.count)",
                "reason": "\(first.reason.rawValue)",
            ]
        )
        return .enqueued(jobID)
    }

    struct LateJoinRefused: Error {
        var reason: String
    }

    /// The start a late joiner of `pending`'s event gets now, its audience still to be set; a
    /// refusal when the event cannot be started for late joiners.
    private func lateJoinArguments(_ pending: PendingStart) async throws -> Result<StartJobArguments, LateJoinRefused> {
        let environment = pending.environment
        guard let app = try await store.app(pending.appID) else { return .failure(.init(reason: "the app is gone")) }
        guard let event = try await store.event(appID: app.id, id: pending.eventID) else {
            return .failure(.init(reason: "the event is gone"))
        }
        // Queued rows exist only for a started event; its state may have moved on since.
        guard LateJoinPolicy.takesLateJoiners(event, hasStarted: true) else {
            return .failure(
                .init(reason: "event \(event.externalKey) is \(event.state.rawValue) or takes no late joiners")
            )
        }
        guard let offer = try await store.lateJoinOffer(appID: app.id, eventID: event.id, environment: environment),
            offer.enabled
        else {
            return .failure(.init(reason: "late joining is off for the event in \(environment.rawValue)"))
        }
        guard app.environments.contains(environment), event.environments.contains(environment), app.signingKeyID != nil
        else {
            return .failure(.init(reason: "the app or event no longer sends starts in \(environment.rawValue)"))
        }
        let channel = try await store.liveChannel(appID: app.id, eventID: event.id, environment: environment)
        let active = channel.flatMap { $0.state == .active ? $0 : nil }
        let arguments = StartJobArguments(
            eventID: event.id,
            environment: environment,
            attributesType: event.attributesType,
            attributes: offer.attributes,
            contentState: offer.contentState,
            // A start needs an alert: "none" is an empty one (nothing shown, no sound).
            alert: offer.alert ?? [:],
            audience: StartAudience(),
            inputPushToken: offer.inputPushToken,
            apnsChannelID: active?.apnsChannelID,
            channelID: active?.id,
            timestamp: try await startTimestamp(app: app, event: event, environment: environment, channel: active),
            lateJoin: true
        )
        do {
            try Self.checkSize(arguments)
        } catch {
            return .failure(
                .init(reason: "the start with the event's latest content-state is over APNs' payload limit")
            )
        }
        return .success(arguments)
    }

    /// The start a device that reported no activity after an uncertain start (`pending`, reason
    /// `absent`) gets now: the attributes, input-push choice and audience kind of the start it makes
    /// up for, the event's newest content-state (its newest broadcast, else the late-join offer's,
    /// else that start's own), the late joiners' alert (or none: the device missed a start, not a
    /// moment of the match), the channel active now and a fresh timestamp; a refusal when the event
    /// cannot be started any more. Late joining off does not stop it: the device was in the start's
    /// audience.
    private func absentArguments(_ pending: PendingStart) async throws -> Result<StartJobArguments, LateJoinRefused> {
        let environment = pending.environment
        guard let app = try await store.app(pending.appID) else { return .failure(.init(reason: "the app is gone")) }
        guard let event = try await store.event(appID: app.id, id: pending.eventID) else {
            return .failure(.init(reason: "the event is gone"))
        }
        guard event.state == .live || event.state == .scheduled else {
            return .failure(.init(reason: "event \(event.externalKey) is \(event.state.rawValue)"))
        }
        guard let sourceID = pending.sourceJobID, let source = try await store.job(appID: app.id, id: sourceID),
            let started = try? StartJobArguments(source.arguments)
        else { return .failure(.init(reason: "the start it makes up for is gone")) }
        guard app.environments.contains(environment), event.environments.contains(environment), app.signingKeyID != nil
        else {
            return .failure(.init(reason: "the app or event no longer sends starts in \(environment.rawValue)"))
        }
        let offer = try await store.lateJoinOffer(appID: app.id, eventID: event.id, environment: environment)
        let channel = try await store.liveChannel(appID: app.id, eventID: event.id, environment: environment)
        let active = channel.flatMap { $0.state == .active ? $0 : nil }
        var arguments = StartJobArguments(
            eventID: event.id,
            environment: environment,
            attributesType: event.attributesType,
            attributes: started.attributes,
            contentState: offer?.contentState ?? started.contentState,
            alert: offer?.alert ?? [:],
            audience: StartAudience(),
            inputPushToken: started.inputPushToken,
            apnsChannelID: active?.apnsChannelID,
            channelID: active?.id,
            timestamp: try await startTimestamp(app: app, event: event, environment: environment, channel: active)
        )
        arguments.absentRestart = true
        do {
            try Self.checkSize(arguments)
        } catch {
            return .failure(
                .init(reason: "the start with the event's latest content-state is over APNs' payload limit")
            )
        }
        return .success(arguments)
    }
}
