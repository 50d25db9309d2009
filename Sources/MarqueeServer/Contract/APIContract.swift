import Foundation
import HTTPTypes
import MarqueeAPI
import MarqueeCore
import Yams

/// What the OpenAPI document promises, read from it once at start: its paths and the methods each
/// takes, every operation's parameters and request body schema, and the roles of the keys that
/// may call it (`x-marquee-roles`). `ContractMiddleware` holds requests to it, so the document
/// and the server cannot drift apart.
struct APIContract: Sendable {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    struct Parameter: Sendable {
        enum Location: String, Sendable { case path, query, header }
        var name: String
        var location: Location
        var required: Bool
        var schema: JSONSchema
    }

    struct Operation: Sendable {
        var id: String
        var parameters: [Parameter]
        var body: JSONSchema?
        /// The kinds of key that may call it: `deployment`, `admin`, `publisher`, `app`; nil
        /// for operations without an API key (health, metrics).
        var roles: Set<String>?
    }

    struct Route: Sendable {
        var template: String
        var segments: [Segment]
        var operations: [HTTPRequest.Method: Operation]

        /// The methods the path takes, for `Allow`: the document's, plus HEAD wherever GET is (the
        /// router answers HEAD with GET's headers).
        var allow: String {
            var methods = operations.keys.map(\.rawValue)
            if operations[.get] != nil, operations[.head] == nil { methods.append("HEAD") }
            let order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
            return methods.sorted { (order.firstIndex(of: $0) ?? 99, $0) < (order.firstIndex(of: $1) ?? 99, $1) }
                .joined(separator: ", ")
        }
    }

    /// The document's routes by how many segments their paths have, each list in template order:
    /// every request's path is matched against those of its own length only.
    let routesBySegmentCount: [Int: [Route]]

    /// The operation of `method` on the route with this template, if the document has one.
    func operation(template: String, method: HTTPRequest.Method) -> Operation? {
        routesBySegmentCount.values.joined().first { $0.template == template }?.operations[method]
    }

    /// The route a path names, with its path parameters' values (percent-decoded); nil when no
    /// path of the document has this shape. A literal segment wins over a parameter
    /// (`/v1/channels/quota` over `/v1/channels/{channelID}`), as in the router.
    func route(for path: String) -> (route: Route, values: [String: String?])? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var best: (route: Route, literals: Int)?
        for route in routesBySegmentCount[parts.count] ?? [] {
            var literals = 0
            var fits = true
            for (segment, part) in zip(route.segments, parts) {
                switch segment {
                case .literal(let text):
                    if text.utf8.elementsEqual(part.utf8) { literals += 1 } else { fits = false }
                case .parameter:
                    if part.isEmpty { fits = false }
                }
                if !fits { break }
            }
            if fits, literals > best?.literals ?? -1 { best = (route, literals) }
        }
        guard let route = best?.route else { return nil }
        // The values of the one route that matched, decoded once (not for every route tried).
        var values: [String: String?] = [:]
        for case (.parameter(let name), let part) in zip(route.segments, parts) {
            values[name] = PercentDecoding.decoded(part)
        }
        return (route, values)
    }
}

extension APIContract {
    /// The contract of the document built into the server.
    static func builtIn() throws -> APIContract {
        guard let yaml = MarqueeAPIDocument.yaml() else {
            throw ConfigurationError(
                key: "openapi",
                "the OpenAPI document is missing from the installation (MarqueeAPI resources)"
            )
        }
        return try APIContract(yaml: yaml)
    }

    init(yaml: String) throws {
        guard let document = try Yams.load(yaml: yaml) as? [String: Any],
            let paths = document["paths"] as? [String: Any]
        else {
            throw ConfigurationError(key: "openapi", "the OpenAPI document has no paths")
        }
        let resolver = SchemaResolver(document: document)
        var routes: [Route] = []
        for (template, item) in paths {
            guard let item = item as? [String: Any] else { continue }
            let shared = (item["parameters"] as? [Any] ?? []).compactMap { resolver.parameter($0) }
            var operations: [HTTPRequest.Method: Operation] = [:]
            for (name, value) in item {
                guard let method = HTTPRequest.Method(name.uppercased()), let operation = value as? [String: Any],
                    ["GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE"].contains(method.rawValue)
                else { continue }
                var parameters = shared
                for parameter in (operation["parameters"] as? [Any] ?? []).compactMap({ resolver.parameter($0) }) {
                    parameters.removeAll { $0.name == parameter.name && $0.location == parameter.location }
                    parameters.append(parameter)
                }
                let content =
                    ((operation["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"]
                    as? [String: Any]
                operations[method] = Operation(
                    id: operation["operationId"] as? String ?? "\(name) \(template)",
                    parameters: parameters,
                    body: content?["schema"].map { resolver.schema($0) },
                    roles: (operation["x-marquee-roles"] as? [String]).map(Set.init)
                )
            }
            let segments = template.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part in
                part.hasPrefix("{") && part.hasSuffix("}")
                    ? Segment.parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
            }
            routes.append(Route(template: template, segments: segments, operations: operations))
        }
        routesBySegmentCount = Dictionary(grouping: routes.sorted { $0.template < $1.template }, by: \.segments.count)
    }
}

/// Resolves the document's `$ref`s into plain schemas and parameters.
private struct SchemaResolver {
    let document: [String: Any]

    func resolve(_ node: Any) -> [String: Any]? {
        var node = node as? [String: Any]
        var hops = 0
        while let reference = node?["$ref"] as? String, reference.hasPrefix("#/"), hops < 16 {
            var target: Any? = document
            for key in reference.dropFirst(2).split(separator: "/") {
                target = (target as? [String: Any])?[JSONPointer.key(key)]
            }
            node = target as? [String: Any]
            hops += 1
        }
        return node
    }

    func parameter(_ node: Any) -> APIContract.Parameter? {
        guard let node = resolve(node), let name = node["name"] as? String,
            let location = (node["in"] as? String).flatMap(APIContract.Parameter.Location.init(rawValue:))
        else { return nil }
        return APIContract.Parameter(
            name: name,
            location: location,
            required: node["required"] as? Bool ?? false,
            schema: node["schema"].map { schema($0) } ?? JSONSchema()
        )
    }

    func schema(_ node: Any, depth: Int = 0) -> JSONSchema {
        guard depth < 24, let node = resolve(node) else { return JSONSchema() }
        var schema = JSONSchema()
        if let type = node["type"] as? String {
            schema.types = [type]
        } else if let types = node["type"] as? [String] {
            schema.types = Set(types)
        }
        if let values = node["enum"] as? [Any] {
            schema.enumValues = values.map { "\($0)" }
            if schema.types.isEmpty { schema.types = ["string"] }
        }
        schema.format = node["format"] as? String
        schema.pattern = (node["pattern"] as? String).map(SchemaPattern.init)
        schema.minimum = (node["minimum"] as? Int).map(Double.init) ?? node["minimum"] as? Double
        schema.maximum = (node["maximum"] as? Int).map(Double.init) ?? node["maximum"] as? Double
        schema.minLength = node["minLength"] as? Int
        schema.maxLength = node["maxLength"] as? Int
        schema.minItems = node["minItems"] as? Int
        schema.maxItems = node["maxItems"] as? Int
        if let properties = node["properties"] as? [String: Any] {
            schema.properties = properties.mapValues { self.schema($0, depth: depth + 1) }
        }
        if let items = node["items"] {
            schema.items = [self.schema(items, depth: depth + 1)]
        }
        let alternatives = (node["oneOf"] as? [Any] ?? []) + (node["anyOf"] as? [Any] ?? [])
        schema.alternatives = alternatives.map { self.schema($0, depth: depth + 1) }
        return schema
    }
}
