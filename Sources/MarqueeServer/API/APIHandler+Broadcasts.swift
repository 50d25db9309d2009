import Foundation
import MarqueeAPI
import MarqueeCore
import MarqueeEngine
import OpenAPIRuntime

extension APIHandler {
    func createBroadcast(_ input: Operations.CreateBroadcast.Input) async throws -> Operations.CreateBroadcast.Output {
        let app = try await authorizedApp(.publisher)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let draft = BroadcastDraft(
            event: body.event.domain,
            contentState: try JSONPassThrough.object(body.contentState, pointer: "/contentState"),
            alert: try body.alert.map {
                try LiveActivityAlert(apnsObject: JSONPassThrough.object($0, pointer: "/alert"))
            },
            staleDate: body.staleDate,
            dismissalDate: body.dismissalDate,
            relevanceScore: body.relevanceScore,
            priority: body.priority.flatMap { APNSPriority(rawValue: $0.rawValue) },
            important: body.important ?? false,
            environments: body.environments?.map(\.domain)
        )
        if let at = body.at {
            let view = try await engine.schedules.scheduleBroadcast(
                app: app,
                eventKey: input.path.eventKey,
                draft: draft,
                at: at
            )
            return .accepted(.init(headers: .init(location: Self.scheduleLocation(view)), body: .json(.init(view))))
        }
        let report = try await engine.broadcasts.broadcast(app: app, key: input.path.eventKey, draft: draft)
        if let failure = report.failure { throw Problem(engine: failure) }
        let result = Components.Schemas.BroadcastResult(report)
        return report.allAccepted ? .ok(.init(body: .json(result))) : .code207(.init(body: .json(result)))
    }

    func listBroadcasts(_ input: Operations.ListBroadcasts.Input) async throws -> Operations.ListBroadcasts.Output {
        let app = try await authorizedApp(.publisher)
        let limit = try Cursor.limit(input.query.limit)
        let before = try Cursor.decode(input.query.after).map { text -> Int64 in
            guard let sequence = Int64(text) else {
                throw Cursor.notIssued
            }
            return sequence
        }
        let environment = input.path.environment.domain
        let entries = try await engine.broadcasts.log(
            app: app,
            key: input.path.eventKey,
            environment: environment,
            before: before,
            limit: limit
        )
        let next = entries.count == limit ? entries.last?.sequence.map { Cursor.encode(String($0)) } : nil
        let budget = try await engine.broadcasts.priorityBudgetUse(
            app: app,
            key: input.path.eventKey,
            environment: environment
        )
        return .ok(
            .init(
                headers: .init(
                    link: nextLink(
                        "/v1/events/\(input.path.eventKey)/channels/\(environment.rawValue)/broadcasts",
                        cursor: next,
                        limit: limit
                    )
                ),
                body: .json(
                    .init(
                        broadcasts: entries.map(Components.Schemas.BroadcastLogItem.init),
                        nextCursor: next,
                        priorityBudget: .init(
                            limitPerHour: budget.limitPerHour,
                            usedLastHour: budget.used,
                            remaining: max(0, budget.limitPerHour - budget.used)
                        )
                    )
                )
            )
        )
    }
}

/// Apple's objects (`content-state`, `alert`) from the request into `JSONValue`. Values keep their
/// JSON types (integers stay integers); object keys are sorted, since the decoder does not keep
/// their order (ActivityKit's `JSONDecoder` does not depend on it).
enum JSONPassThrough {
    static func object(_ container: OpenAPIObjectContainer, pointer: String) throws -> JSONObject {
        var object = JSONObject()
        for key in container.value.keys.sorted() {
            object[key] = try value(container.value[key] ?? nil, pointer: pointer + "/" + key)
        }
        return object
    }

    private static func value(_ value: (any Sendable)?, pointer: String) throws -> JSONValue {
        switch value {
        case .none: return .null
        case let bool as Bool: return .bool(bool)
        case let integer as Int: return .integer(Int64(integer))
        case let integer as Int64: return .integer(integer)
        case let number as Double: return .number(number)
        case let string as String: return .string(string)
        case let array as [(any Sendable)?]:
            return .array(try array.enumerated().map { try Self.value($1, pointer: "\(pointer)/\($0)") })
        case let dictionary as [String: (any Sendable)?]:
            var object = JSONObject()
            for key in dictionary.keys.sorted() {
                object[key] = try Self.value(dictionary[key] ?? nil, pointer: pointer + "/" + key)
            }
            return .object(object)
        default:
            throw Problem(
                .invalidRequest,
                detail: "\(pointer) is not JSON",
                errors: [.init(pointer: pointer, detail: "is not a JSON value")]
            )
        }
    }
}

extension LiveActivityAlert {
    /// APNs' `alert` object: `title` and `body` as strings or `{"loc-key", "loc-args"}`, optional `sound`.
    init(apnsObject object: JSONObject) throws {
        var errors: [Problem.FieldProblem] = []
        func text(_ key: String) -> LiveActivityAlertText? {
            switch object[key] {
            case .string(let text): return .plain(text)
            case .object(let localized):
                if case .string(let locKey) = localized["loc-key"] {
                    var arguments: [String] = []
                    if case .array(let values) = localized["loc-args"] {
                        for value in values {
                            guard case .string(let argument) = value else {
                                errors.append(.init(pointer: "/alert/\(key)/loc-args", detail: "must be strings"))
                                return nil
                            }
                            arguments.append(argument)
                        }
                    }
                    return .localized(key: locKey, arguments: arguments)
                }
                errors.append(
                    .init(pointer: "/alert/\(key)", detail: "must be a string or an object with loc-key and loc-args")
                )
                return nil
            default:
                errors.append(
                    .init(pointer: "/alert/\(key)", detail: "must be a string or an object with loc-key and loc-args")
                )
                return nil
            }
        }
        let title = text("title")
        let body = text("body")
        var sound: String?
        switch object["sound"] {
        case .none: break
        case .string(let name): sound = name
        default: errors.append(.init(pointer: "/alert/sound", detail: "must be a sound name"))
        }
        for key in object.keys where !["title", "body", "sound"].contains(key) {
            errors.append(
                .init(pointer: "/alert/\(key)", detail: "is not a Live Activity alert field (title, body, sound)")
            )
        }
        guard errors.isEmpty, let title, let body else {
            throw errors.isEmpty
                ? Problem.invalid([.init(pointer: "/alert", detail: "needs a title and a body")])
                : Problem.invalid(errors)
        }
        self.init(title: title, body: body, sound: sound)
    }
}
