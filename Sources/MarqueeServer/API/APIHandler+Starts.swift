import Foundation
import MarqueeAPI
import MarqueeCore
import MarqueeEngine

extension APIHandler {
    func startEventActivities(
        _ input: Operations.StartEventActivities.Input
    ) async throws -> Operations.StartEventActivities.Output {
        let app = try await authorizedApp(.publisher)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let request = StartRequest(
            environment: body.environment.domain,
            attributes: try Self.passThrough(body.attributes, pointer: "/attributes"),
            contentState: try Self.passThrough(body.contentState, pointer: "/contentState"),
            alert: try Self.passThrough(body.alert, pointer: "/alert"),
            audience: StartAudience(body.audience),
            inputPushToken: body.inputPushToken ?? false,
            lateJoiners: LateJoinChoice(
                enabled: body.lateJoiners?.enabled,
                alert: try body.lateJoiners?.alert.map { try Self.passThrough($0, pointer: "/lateJoiners/alert") }
            )
        )
        if let at = body.at {
            let view = try await engine.schedules.scheduleStart(
                app: app,
                eventKey: input.path.eventKey,
                request: request,
                at: at
            )
            return .accepted(
                .init(headers: .init(location: Self.scheduleLocation(view)), body: .json(.Schedule(.init(view))))
            )
        }
        let view = try await engine.starts.start(app: app, eventKey: input.path.eventKey, request: request)
        return .accepted(
            .init(headers: .init(location: "/v1/jobs/\(PublicID.job(view.job.id))"), body: .json(.Job(.init(view))))
        )
    }

    /// An Apple object of the request as Marquee keeps it: the same members and values (JSON
    /// objects' key order is not kept by the request decoder; ActivityKit does not depend on it).
    static func passThrough<Value: Encodable>(_ value: Value, pointer: String) throws -> JSONObject {
        let decoded = try? JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
        guard case .object(let object)? = decoded else {
            throw Problem(
                .invalidRequest,
                detail: "\(pointer) must be a JSON object",
                errors: [.init(pointer: pointer, detail: "must be an object")]
            )
        }
        return object
    }
}

extension StartAudience {
    init(_ audience: Components.Schemas.StartAudience?) {
        self.init(tags: audience?.tags ?? [], userIDs: audience?.userIDs ?? [], tokens: audience?.tokens ?? [])
    }
}

extension APIHandler {
    /// `POST /v1/events/{eventKey}/audience`: the size of a start's audience before sending.
    func countAudience(_ input: Operations.CountAudience.Input) async throws -> Operations.CountAudience.Output {
        let app = try await authorizedApp(.publisher)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let size = try await engine.starts.audienceSize(
            app: app,
            eventKey: input.path.eventKey,
            environment: body.environment.domain,
            audience: StartAudience(body.audience)
        )
        return .ok(
            .init(
                body: .json(
                    .init(environment: body.environment, attributesType: size.attributesType, count: size.count)
                )
            )
        )
    }
}
