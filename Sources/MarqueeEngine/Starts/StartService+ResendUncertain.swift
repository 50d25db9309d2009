import Foundation
import Logging
import MarqueeCore

extension StartService {
    /// Sends a finished start job's uncertain tokens (written to APNs, no answer: the device may or
    /// may not show the activity) the start again, as a new start job whose audience is exactly
    /// those tokens, with the job's attributes, content state and alert, a new timestamp and the
    /// event's channel as it is now. It goes through the start ledger like every start, so a token
    /// that has started since is not sent again.
    ///
    /// One resend per job (its ID is derived from the job's): asking again answers the resend job
    /// whatever became of it; its own uncertain tokens are resent from it. A job that is not a start,
    /// has not finished, or has no uncertain tokens is a `jobConflict`.
    public func resendUncertain(app: App, id: JobID) async throws -> JobView {
        let original = try await job(app: app, id: id)
        let resendID = JobID(resendingUncertainOf: id)
        if let existing = try await store.job(appID: app.id, id: resendID) {
            return try await view(app: app, job: existing)
        }
        guard original.job.kind == .startFanOut, let arguments = try? StartJobArguments(original.job.arguments) else {
            throw EngineError.jobConflict(
                "job \(id.publicID) is an \(original.job.kind) job: only a start's uncertain tokens can be resent"
            )
        }
        guard original.job.state.isFinished else {
            throw EngineError.jobConflict(
                """
                job \(id.publicID) is \(original.job.state.rawValue): its uncertain tokens can be resent once it \
                has finished (or been cancelled)
                """
            )
        }
        guard original.job.progress.uncertain > 0 else {
            throw EngineError.jobConflict(
                "job \(id.publicID) has no uncertain tokens: every start it sent was answered"
            )
        }
        guard let event = try await store.event(appID: app.id, id: arguments.eventID) else {
            throw EngineError.notFound(resource: "event", id: "\(arguments.eventID)")
        }
        let request = StartRequest(
            environment: arguments.environment,
            attributes: arguments.attributes,
            contentState: arguments.contentState,
            alert: arguments.alert,
            audience: StartAudience(),
            inputPushToken: arguments.inputPushToken
        )
        let view = try await start(
            app: app,
            eventKey: event.externalKey,
            request: request,
            jobID: resendID,
            uncertainOf: id
        )
        logger.info(
            "uncertain starts resent",
            metadata: [
                "job.id": "\(view.job.id.publicID)", "job.uncertain_of": "\(id.publicID)",
                "job.total": "\(view.total ?? 0)",
            ]
        )
        return view
    }
}
