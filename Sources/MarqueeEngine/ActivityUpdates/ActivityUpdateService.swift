import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore

/// Enqueues the device pushes that carry a broadcast to the activities its channel does not reach
/// (started with `input-push-token`, or on iOS 17.2–17.x): one durable job per event and
/// environment, run by `ActivityUpdateHandler`.
public struct ActivityUpdateService: Sendable {
    let store: any ActivityStore & JobStore
    let wakeup: JobWakeup
    let clock: any WallClock
    let logger: Logger

    /// The activities of the event in `environment` that take device pushes.
    func audience(app: App, event: Event, environment: APNSEnvironment) async throws -> ActivityUpdateAudience {
        try await store.updateAudience(ActivityUpdateQuery(appID: app.id, eventID: event.id, environment: environment))
    }

    /// Refuses a body too large for a device push (4096 bytes, less than a broadcast's 5120) when
    /// the event has activities that need one in any of `environments`, before anything is sent.
    func checkSize(of draft: BroadcastDraft, reaching environments: [APNSEnvironment]) throws {
        guard !environments.isEmpty else { return }
        do {
            _ = try draft.payload(timestamp: clock.unixSeconds).encodedForDevice()
        } catch {
            switch error {
            case .tooLarge(let size, let limit):
                throw EngineError.invalidInput([
                    FieldError(
                        "/contentState",
                        """
                        the push to activities on update tokens would be \(size) bytes; APNs takes at most \
                        \(limit) for a device
                        """
                    )
                ])
            }
        }
    }

    /// Enqueues the job if the event has activities on update tokens in `environment`; `nil` if it
    /// has none. The push carries the channel's broadcast timestamp when there was one (one
    /// sequence for both kinds of activity), the event's next one otherwise, and in any case one
    /// past the newest any of its activities was sent (a start, or an update when the event's
    /// channel came or went): a device drops a push no newer than the last it applied.
    /// With `jobID` (a scheduled broadcast's) the job is enqueued once: when it exists, an earlier
    /// run of the schedule enqueued it, and it is answered instead. Without
    /// `hasUpdateTokenActivities` (the event's read found none) nothing is read.
    func enqueue(
        app: App,
        event: Event,
        environment: APNSEnvironment,
        draft: BroadcastDraft,
        channelTimestamp: Int64?,
        priority: APNSPriority,
        hasUpdateTokenActivities: Bool,
        jobID: JobID? = nil
    ) async throws -> ActivityUpdateEnqueued? {
        if let jobID, let existing = try await store.job(appID: app.id, id: jobID) {
            return ActivityUpdateEnqueued(jobID: existing.id, total: existing.progress.total ?? 0)
        }
        guard hasUpdateTokenActivities else { return nil }
        let audience = try await audience(app: app, event: event, environment: environment)
        guard audience.count > 0 else { return nil }
        let total = audience.count
        var timestamp = channelTimestamp ?? 0
        if channelTimestamp == nil {
            timestamp = try await store.nextEventTimestamp(
                appID: app.id,
                eventID: event.id,
                environment: environment,
                now: clock.unixSeconds
            )
        }
        if let latest = audience.latestTimestamp { timestamp = max(timestamp, latest + 1) }
        let arguments = ActivityUpdateJobArguments(
            eventID: event.id,
            environment: environment,
            event: draft.event,
            payload: draft.payload(timestamp: timestamp).jsonObject,
            timestamp: timestamp,
            priority: priority
        )
        let now = clock.now
        let job = Job(
            id: jobID ?? JobID(),
            appID: app.id,
            kind: .activityUpdate,
            arguments: arguments.jsonValue,
            dueAt: now,
            progress: JobProgress(total: total),
            createdAt: now
        )
        try await store.enqueueJob(job)
        wakeup.signal()
        logger.debug(
            "activity updates enqueued",
            metadata: ["job.id": "\(job.id.publicID)", "event.key": "\(event.externalKey)", "job.total": "\(total)"]
        )
        return ActivityUpdateEnqueued(jobID: job.id, total: total)
    }
}

/// The job that pushes a broadcast to activities on update tokens.
public struct ActivityUpdateEnqueued: Sendable, Hashable {
    public var jobID: JobID
    /// Activities it pushes to.
    public var total: Int64
}
