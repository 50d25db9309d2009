import Foundation
import HTTPTypes
import Hummingbird
import MarqueeCore
import NIOCore

/// Holds every request to the OpenAPI document before an operation runs, with answers that say
/// what to fix:
/// - a method the path does not take: 405 with `Allow` (the document's methods for that path);
/// - a key whose kind the operation does not list in `x-marquee-roles`: 403 (so a role decides
///   what a key reads and does, in one place, before any idempotent replay);
/// - a path or query parameter that does not fit its schema: 422 naming it (`in`, `name`);
/// - a JSON body with `null` where the schema does not allow it, a value of another type, an
///   enum's stranger or a date-time that is not RFC 3339: 422 with each field's pointer.
/// Runs after authentication (an unauthenticated request learns nothing of the routes).
struct ContractMiddleware<Context: RequestContext>: RouterMiddleware {
    let contract: APIContract
    let maximumBodyBytes: Int

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let (route, pathValues) = contract.route(for: request.uri.path) else {
            return try await next(request, context)
        }
        let method = request.method == .head ? HTTPRequest.Method.get : request.method
        guard let operation = route.operations[method] else {
            var problem = Problem(
                .methodNotAllowed,
                detail: "\(route.template) takes \(route.allow), not \(request.method.rawValue)"
            )
            problem.headers = [(.allow, route.allow)]
            throw problem
        }
        if let roles = operation.roles, let key = RequestScope.current?.apiKey {
            let kind = key.isDeploymentKey ? "deployment" : key.role.rawValue
            guard roles.contains(kind) else { throw Self.forbidden(kind: kind, roles: roles) }
        }
        var fields = Self.parameterProblems(
            operation: operation,
            pathValues: pathValues,
            query: request.uri.queryParameters
        )
        var request = request
        if fields.isEmpty, let schema = operation.body, Self.isJSON(request.headers[.contentType]) {
            let buffer = try await request.collectBody(upTo: maximumBodyBytes)
            if buffer.readableBytes > 0 {
                guard let value = JSONParser.value(of: buffer) else {
                    throw Problem(.malformedRequest, detail: "the body is not valid JSON")
                }
                var found: [(pointer: String, detail: String)] = []
                schema.problems(with: value, at: "", into: &found)
                fields = found.map { Problem.FieldProblem(pointer: $0.pointer, detail: $0.detail) }
            }
        }
        guard fields.isEmpty else { throw Problem.invalid(fields) }
        return try await next(request, context)
    }

    /// Whether the contract admits, as the middleware above would, a request to `operation` without
    /// a query, by a key with `key`'s role, with these path parameters (as the route matched them)
    /// and a JSON body already parsed: its role, its path parameters and its body's schema. For
    /// answers written on the event loop (`TokenRegistrationAnswer`), which know their route and
    /// leave whatever it does not admit to the middleware.
    static func admits(
        _ operation: APIContract.Operation,
        pathValues: [String: String?],
        key: APIKey,
        body: JSONValue
    ) -> Bool {
        if let roles = operation.roles {
            guard roles.contains(key.isDeploymentKey ? "deployment" : key.role.rawValue) else { return false }
        }
        guard parameterProblems(operation: operation, pathValues: pathValues, query: Parameters()).isEmpty,
            let schema = operation.body
        else { return false }
        var found: [(pointer: String, detail: String)] = []
        schema.problems(with: body, at: "", into: &found)
        return found.isEmpty
    }

    static func parameterProblems(
        operation: APIContract.Operation,
        pathValues: [String: String?],
        query: Parameters
    ) -> [Problem.FieldProblem] {
        var fields: [Problem.FieldProblem] = []
        for parameter in operation.parameters {
            switch parameter.location {
            case .path:
                guard let entry = pathValues[parameter.name] else { continue }
                guard let value = entry else {
                    fields.append(
                        .init(parameter: parameter.name, in: "path", detail: "is not valid percent-encoded UTF-8")
                    )
                    continue
                }
                if let detail = parameter.schema.problem(withParameter: value) {
                    fields.append(.init(parameter: parameter.name, in: "path", detail: detail))
                }
            case .query:
                let values = query.getAll(parameter.name)
                if values.isEmpty {
                    if parameter.required {
                        fields.append(.init(parameter: parameter.name, in: "query", detail: "is required"))
                    }
                    continue
                }
                if values.count > 1 {
                    fields.append(.init(parameter: parameter.name, in: "query", detail: "must be given once"))
                    continue
                }
                if let detail = parameter.schema.problem(withParameter: values[0]) {
                    fields.append(.init(parameter: parameter.name, in: "query", detail: detail))
                }
            case .header:
                continue
            }
        }
        return fields
    }

    static func forbidden(kind: String, roles: Set<String>) -> Problem {
        if kind == "deployment" {
            return Problem(
                .forbidden,
                detail: "a deployment key manages apps only; use one of the app's keys (POST /v1/apps/{appID}/api-keys)"
            )
        }
        let allowed = ["admin", "publisher", "app", "deployment"].filter(roles.contains).map {
            $0 == "deployment" ? "a deployment key" : $0
        }
        return Problem(
            .forbidden,
            detail: "this operation takes \(allowed.joined(separator: " or ")) keys; this key's role is \(kind)"
        )
    }

    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = HTTPFieldText.trimmed(contentType.prefix { $0 != ";" }).lowercased()
        return type == "application/json" || type.hasSuffix("+json")
    }
}
