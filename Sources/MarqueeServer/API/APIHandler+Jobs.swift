import Foundation
import MarqueeAPI
import MarqueeCore
import MarqueeEngine
import OpenAPIRuntime

extension APIHandler {
    func getJob(_ input: Operations.GetJob.Input) async throws -> Operations.GetJob.Output {
        let app = try await authorizedApp(.publisher)
        let view = try await engine.starts.job(app: app, id: try Self.jobID(input.path.jobID))
        return .ok(.init(body: .json(.init(view))))
    }

    func listJobs(_ input: Operations.ListJobs.Input) async throws -> Operations.ListJobs.Output {
        let app = try await authorizedApp(.publisher)
        let limit = try Cursor.limit(input.query.limit)
        let before = try Cursor.decode(input.query.after).map(Self.jobPosition)
        let views = try await engine.starts.jobs(app: app, before: before, limit: limit)
        let next = views.count == limit ? views.last.map { Cursor.encode(Self.jobCursorKey($0.job)) } : nil
        return .ok(
            .init(
                headers: .init(link: nextLink("/v1/jobs", cursor: next, limit: limit)),
                body: .json(.init(jobs: views.map(Components.Schemas.Job.init), nextCursor: next))
            )
        )
    }

    func cancelJob(_ input: Operations.CancelJob.Input) async throws -> Operations.CancelJob.Output {
        let app = try await authorizedApp(.publisher)
        let view = try await engine.starts.cancel(app: app, id: try Self.jobID(input.path.jobID))
        return .ok(.init(body: .json(.init(view))))
    }

    func resendUncertainStarts(
        _ input: Operations.ResendUncertainStarts.Input
    ) async throws -> Operations.ResendUncertainStarts.Output {
        let app = try await authorizedApp(.publisher)
        let view = try await engine.starts.resendUncertain(app: app, id: try Self.jobID(input.path.jobID))
        return .accepted(
            .init(headers: .init(location: "/v1/jobs/\(PublicID.job(view.job.id))"), body: .json(.init(view)))
        )
    }

    func followJob(_ input: Operations.FollowJob.Input) async throws -> Operations.FollowJob.Output {
        let app = try await authorizedApp(.publisher)
        let progress = try await engine.starts.progress(app: app, id: try Self.jobID(input.path.jobID))
        let first = input.headers.lastEventID.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        let events = JobServerSentEvents(base: progress, firstID: first + 1)
        return .ok(
            .init(
                body: .textEventStream(
                    HTTPBody(events.asEncodedServerSentEvents(), length: .unknown, iterationBehavior: .single)
                )
            )
        )
    }

    static func jobID(_ text: String) throws -> JobID {
        guard let id = PublicID.parseJob(text) else { throw Problem(.notFound, detail: "job \(text) not found") }
        return id
    }

    /// The list cursor's key: the job's creation time and its ID.
    static func jobCursorKey(_ job: Job) -> String {
        Cursor.key(job.createdAt, job.id)
    }

    static func jobPosition(_ key: String) throws -> JobListPosition {
        let (createdAt, id) = try Cursor.timeAndID(key)
        guard let id = JobID(uuidString: id) else { throw Cursor.notIssued }
        return JobListPosition(createdAt: createdAt, id: id)
    }
}

/// A job's progress as server-sent events: `progress` while it runs, then `done` or `failed`;
/// `id:` counts from `firstID`.
struct JobServerSentEvents: AsyncSequence, Sendable {
    typealias Element = ServerSentEvent
    let base: AsyncThrowingStream<JobView, any Error>
    let firstID: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<JobView, any Error>.AsyncIterator
        var nextID: Int

        mutating func next() async throws -> ServerSentEvent? {
            guard let view = try await base.next() else { return nil }
            defer { nextID += 1 }
            let kind =
                switch view.job.state {
                case .pending, .running: "progress"
                case .succeeded, .cancelled: "done"
                case .failed: "failed"
                }
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = JSONAnswerStyle.foundation
            let data = String(decoding: try encoder.encode(Components.Schemas.Job(view)), as: UTF8.self)
            return ServerSentEvent(id: String(nextID), event: kind, data: data)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), nextID: firstID)
    }
}

extension Components.Schemas.Job {
    init(_ view: JobView) {
        self.init(
            id: PublicID.job(view.job.id),
            kind: view.job.kind.rawValue,
            state: .init(view.job.state),
            eventKey: view.eventKey,
            environment: view.environment.map(Components.Schemas.Environment.init),
            lateJoiners: view.lateJoiners ? true : nil,
            confirmation: view.confirmation.map { counts in
                .init(
                    asked: counts.asked,
                    confirmed: counts[.confirmed],
                    restarted: counts[.restarted],
                    ended: counts[.ended],
                    uncertain: counts[.uncertain],
                    waiting: counts.waiting
                )
            },
            progress: .init(
                total: view.total,
                sent: view.sent,
                accepted: view.accepted,
                failed: view.failed,
                uncertain: view.uncertain,
                failures: view.failures.map { count in
                    .init(outcome: .init(count.outcome), reason: count.reason?.reasonString, count: count.count)
                },
                tokensRetired: view.retired,
                downgraded: view.downgraded,
                remaining: view.remaining,
                ratePerSecond: view.rate,
                estimatedSecondsLeft: view.estimatedSecondsLeft
            ),
            attempts: view.job.attempts,
            lastError: view.job.lastError,
            createdAt: view.job.createdAt,
            updatedAt: view.job.updatedAt
        )
    }
}

extension Components.Schemas.JobState {
    init(_ state: JobState) {
        switch state {
        case .pending: self = .pending
        case .running: self = .running
        case .succeeded: self = .succeeded
        case .failed: self = .failed
        case .cancelled: self = .cancelled
        }
    }
}

extension Components.Schemas.JobFailureCount.OutcomePayload {
    init(_ outcome: DeliveryOutcome) {
        switch outcome {
        case .rejected: self = .rejected
        case .tokenInvalid: self = .tokenInvalid
        // The job's failures leave accepted and uncertain tokens out (`uncertain` has its own count).
        case .failed, .accepted, .uncertain: self = .failed
        case .skipped: self = .skipped
        }
    }
}
