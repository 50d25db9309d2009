import Foundation
import MarqueeClient
import OpenAPIRuntime

/// Follows a job through its server-sent events (`GET /v1/jobs/{jobID}/events`): `progress` while
/// it runs, then `done` or `failed`. A stream that breaks before the end is resumed with
/// `Last-Event-ID`, a few times, before the follower gives up.
struct JobFollower: Sendable {
    typealias Job = Components.Schemas.Job

    let client: MarqueeClient
    /// Reconnections after a stream broke (not after each event).
    var reconnections = 3

    /// Follows the job until it ends; `onProgress` hears every state the server sends.
    func follow(_ jobID: String, onProgress: (Job) -> Void) async throws(MarqueeClientError) -> Job {
        var lastEventID: String?
        var failures = 0
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        while true {
            let body = try await client.send { [lastEventID] in
                try await $0.followJob(path: .init(jobID: jobID), headers: .init(lastEventID: lastEventID)).ok.body
                    .textEventStream
            }.value
            do {
                for try await event in body.asDecodedServerSentEvents() {
                    if let id = event.id { lastEventID = id }
                    guard let data = event.data else { continue }
                    let job = try decoder.decode(Job.self, from: Data(data.utf8))
                    onProgress(job)
                    if event.event == "done" || event.event == "failed" { return job }
                }
            } catch let error as DecodingError {
                throw MarqueeClientError(
                    kind: .unexpectedResponse,
                    title: "unexpected event from the job's stream",
                    detail: "\(error)"
                )
            } catch is CancellationError {
                throw MarqueeClientError(kind: .cancelled, title: "cancelled")
            } catch {
                // The connection broke mid-stream: resume below.
            }
            failures += 1
            guard failures <= reconnections else {
                throw MarqueeClientError(
                    kind: .unreachable,
                    title: "the job's event stream kept breaking",
                    detail: "follow it again with `marquee jobs follow \(jobID)`"
                )
            }
        }
    }
}
