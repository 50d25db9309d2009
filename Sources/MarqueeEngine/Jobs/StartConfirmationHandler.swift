import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore
import NIOCore

/// Runs confirmation jobs (`jobs.uncertainStarts=confirm`): for one start job, once it finished,
/// asks the app of each device whose start ended uncertain (a background push to the app's device
/// token), then comes back when the next decision is due (the job's `dueAt`, never a sleep) and
/// applies `StartConfirmation.step` to each device until every one is decided: `confirmed` (the
/// start ledger has it, as confirmed), `restarted` (a pending start `absent`, which the late-join
/// pump sends with the latest content-state), `ended`, or `uncertain` when the window closed.
/// Every pass is recorded in one transaction, so a run that dies is resumed where it stopped; a
/// device asked twice after a crash is only woken twice.
struct StartConfirmationHandler: JobHandler {
    let store: any AppStore & EventStore & JobStore & StartConfirmationStore
    let clients: APNSClientRegistry
    let rules: StartConfirmation
    let configuration: JobWorkerConfiguration
    /// Wakes the late-join pump when a pass queued starts (PostgreSQL also notifies the others).
    let pendingStartWakeup: JobWakeup
    let clock: any WallClock
    let logger: Logger
    let metrics: ConfirmationMetrics

    var kinds: Set<JobKind> { [.confirmStarts] }

    /// Devices read and decided per pass and transaction.
    static let pageSize = 500
    /// How often a pass looks again while devices wait: a report (showing, or absent once the start
    /// had time to arrive) is acted on within this, not only when the window closes.
    static let recheckInterval = Duration.seconds(5)

    func run(_ job: Job, owner: String, stop: RunStop) async throws -> FanOutRunner.Ending {
        let arguments: ConfirmationJobArguments
        do {
            arguments = try ConfirmationJobArguments(job.arguments)
        } catch {
            throw JobFailure(description: "\(error)")
        }
        do {
            guard let next = try await pass(job, arguments, owner: owner) else {
                try await store.completeJob(id: job.id, owner: owner, at: clock.now)
                return .completed
            }
            try await store.failJob(id: job.id, owner: owner, error: next.why, retryAt: next.at, at: clock.now)
            return .rescheduled
        } catch let error as StoreError {
            guard case .leaseLost = error else {
                return try await retryLater(job, owner: owner, arguments, after: error)
            }
            throw error
        } catch {
            return try await retryLater(job, owner: owner, arguments, after: error)
        }
    }

    /// A confirmation waits for minutes and is leased many times: a store or APNs failure is tried
    /// again after a pause, never counted towards giving it up.
    private func retryLater(
        _ job: Job,
        owner: String,
        _ arguments: ConfirmationJobArguments,
        after error: any Error
    ) async throws -> FanOutRunner.Ending {
        logger.warning(
            "a start confirmation pass failed; it is tried again",
            metadata: ["job.id": "\(arguments.startJobID.publicID)", "error": "\(String(reflecting: error))"]
        )
        try await store.failJob(
            id: job.id,
            owner: owner,
            error: "the last pass failed (\(error)); tried again",
            retryAt: clock.now.addingTimeInterval(configuration.pollInterval.timeInterval),
            at: clock.now
        )
        return .rescheduled
    }

    /// When the job should run again, and why.
    struct Next {
        var at: Date
        var why: String
    }

    /// One pass over the job's undecided devices; `nil` when none is left.
    private func pass(_ job: Job, _ arguments: ConfirmationJobArguments, owner: String) async throws -> Next? {
        guard let start = try await store.job(appID: job.appID, id: arguments.startJobID) else { return nil }
        let now = clock.now
        if !start.state.isFinished {
            return Next(
                at: now.addingTimeInterval(configuration.pollInterval.timeInterval),
                why: "waiting for its start job to finish"
            )
        }
        guard let app = try await store.app(job.appID),
            let event = try await store.event(appID: app.id, id: arguments.eventID)
        else {
            return nil
        }
        var nextDecision: Date?
        var after: Int64 = 0
        while true {
            let devices = try await store.unconfirmedStarts(
                appID: app.id,
                eventID: event.id,
                jobID: arguments.startJobID,
                afterRowID: after,
                limit: Self.pageSize
            )
            guard let last = devices.last else { break }
            after = last.tokenRowID
            var steps = ConfirmationSteps(
                appID: app.id,
                eventID: event.id,
                environment: arguments.environment,
                jobID: arguments.startJobID
            )
            var toAsk: [UnconfirmedStart] = []
            for device in devices {
                if device.watchedSince == nil { steps.watched.append(device.tokenRowID) }
                func decide(_ outcome: ConfirmationOutcome) {
                    steps.decided.append(.init(tokenRowID: device.tokenRowID, outcome: outcome, sentAt: device.sentAt))
                }
                switch rules.step(for: Self.confirmationDevice(device, now: now), now: now) {
                case .ask: toAsk.append(device)
                case .confirmed: decide(.confirmed)
                case .ended: decide(.ended)
                case .start: decide(.restarted)
                // `none` is for an accepted start: these are uncertain, so it never comes.
                case .uncertain, .none: decide(.uncertain)
                case .wait(let until): nextDecision = min(nextDecision ?? until, until)
                }
            }
            if !toAsk.isEmpty {
                steps.asked = try await ask(toAsk, app: app, event: event, environment: arguments.environment)
                let closes = now.addingTimeInterval(rules.window.timeInterval)
                nextDecision = min(nextDecision ?? closes, closes)
            }
            let queued = try await store.recordConfirmationSteps(steps, at: now)
            if queued > 0 { pendingStartWakeup.signal() }
            count(steps, queued: queued, app: app)
            guard
                try await store.renewJobLease(
                    id: job.id,
                    owner: owner,
                    now: clock.now,
                    leaseDuration: configuration.leaseDuration
                )
            else {
                throw StoreError.leaseLost(job.id)
            }
            if devices.count < Self.pageSize { break }
        }
        let recheck = now.addingTimeInterval(Self.recheckInterval.timeInterval)
        return nextDecision.map {
            Next(at: max(min($0, recheck), now.addingTimeInterval(0.001)), why: "waiting for devices to answer")
        }
    }

    /// What `StartConfirmation` weighs for one device.
    static func confirmationDevice(_ device: UnconfirmedStart, now: Date) -> StartConfirmation.Device {
        var report: StartConfirmation.Report?
        if let state = device.presence, let at = device.reportedAt {
            switch state {
            case .showing: report = .showing(at: at)
            case .ended, .dismissed: report = .ended(at: at)
            case .absent: report = .absent(at: at)
            }
        }
        return StartConfirmation.Device(
            start: .uncertain(sentAt: device.sentAt),
            report: report,
            askedAt: device.askedAt,
            canBeAsked: device.deviceToken != nil,
            restarted: device.restarted,
            watchedSince: device.watchedSince ?? now
        )
    }

    /// Sends each device's app Marquee's background push about the event; returns the devices it
    /// was written for (answered or not: an app that cannot be reached is left to the window).
    private func ask(
        _ devices: [UnconfirmedStart],
        app: App,
        event: Event,
        environment: APNSEnvironment
    ) async throws -> [Int64] {
        let body: JSONValue = [
            "aps": ["content-available": 1],
            "marquee": [
                "ask": "presence",
                "events": [["eventKey": .string(event.externalKey), "environment": .string(environment.rawValue)]],
            ],
        ]
        let template = try APNSDevicePush.background(
            deviceToken: "00",
            bundleID: app.bundleID,
            payload: ByteBuffer(bytes: body.jsonBytes),
            expiration: .at(clock.now.addingTimeInterval(rules.window.timeInterval))
        )
        var pushes: [APNSDevicePush] = []
        var asked: [Int64] = []
        for device in devices {
            guard let token = device.deviceToken else { continue }
            asked.append(device.tokenRowID)
            // A device token APNs would refuse as written is never sent; the device is left to the window.
            if let push = try? template.sending(to: token) { pushes.append(push) }
        }
        if !pushes.isEmpty {
            let client = try await clients.holdClient(for: app, environment: environment)
            defer { Task { await clients.release(client) } }
            var refused = 0
            for await chunk in client.send(pushes, window: configuration.window) {
                refused += chunk.filter { if case .failure = $0.result { true } else { false } }.count
            }
            logger.debug(
                "uncertain devices asked",
                metadata: ["event.key": "\(event.externalKey)", "count": "\(pushes.count)", "refused": "\(refused)"]
            )
        }
        metrics.count(app: app, .asked, asked.count)
        return asked
    }

    private func count(_ steps: ConfirmationSteps, queued: Int, app: App) {
        var confirmed = 0
        var restarts = 0
        var uncertain = 0
        for decision in steps.decided {
            switch decision.outcome {
            case .confirmed: confirmed += 1
            case .restarted: restarts += 1
            case .uncertain: uncertain += 1
            case .ended: break
            }
        }
        metrics.count(app: app, .confirmed, confirmed)
        metrics.count(app: app, .restarted, queued)
        // A restart the store refused (the device was restarted for the event before) stays uncertain.
        metrics.count(app: app, .uncertain, uncertain + restarts - queued)
    }
}
