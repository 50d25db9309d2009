import Foundation
import Logging
import MarqueeAPI
import MarqueeCore
import MarqueeEngine
import Prometheus

/// The REST API: the generated `APIProtocol`, one method per operation of `openapi.yaml`, each a
/// thin translation between the API's types and one engine use case. Authorisation is the first
/// line of every operation: which app the key acts for, and whether its role allows the operation.
///
/// A class: every route's closure holds the handler, and a struct carrying the whole
/// `ServerConfiguration` was copied and destroyed on each request (7 % of a `/health/live`
/// request's CPU in a profile); a reference is one retain.
final class APIHandler: APIProtocol {
    let engine: MarqueeEngine
    let configuration: ServerConfiguration
    /// This server's metrics, which `/metrics` shows.
    let metrics: PrometheusCollectorRegistry
    /// The APNs emulator `/v1/emulator` reads, when APNs is one.
    let emulator: (any EmulatorInspection)?

    init(
        engine: MarqueeEngine,
        configuration: ServerConfiguration,
        metrics: PrometheusCollectorRegistry,
        emulator: (any EmulatorInspection)? = nil
    ) {
        self.engine = engine
        self.configuration = configuration
        self.metrics = metrics
        self.emulator = emulator
    }

    var scope: RequestScope {
        get throws {
            guard let scope = RequestScope.current else { throw Problem(.internalError, detail: "no request scope") }
            return scope
        }
    }

    /// The app of the request's key, if the key's role allows `role`. A deployment key acts on no
    /// app's events or tokens.
    func authorizedApp(_ role: APIKeyRole) async throws -> App {
        guard let key = try scope.apiKey else {
            throw Problem(.unauthorized, detail: "send the API key as Authorization: Bearer mq_…")
        }
        guard let appID = key.appID else {
            throw Problem(
                .forbidden,
                detail: "a deployment key manages apps only; use one of the app's keys (POST /v1/apps/{appID}/api-keys)"
            )
        }
        guard key.role.allows(role) else {
            throw Problem(
                .forbidden,
                detail: "this operation needs the \(role.rawValue) role; the key has \(key.role.rawValue)"
            )
        }
        // Authentication read the app with the key (or remembered both, auth.cacheSeconds).
        guard let app = try scope.app, app.id == appID else { return try await engine.apps.app(appID) }
        return app
    }

    /// The app a `/v1/apps/{appID}` route names, if the key may manage it: a deployment key every
    /// app, an app's admin key its own. Another app answers 404, as if it did not exist.
    func managedApp(_ publicID: String) async throws -> App {
        guard let key = try scope.apiKey else { throw Problem(.unauthorized) }
        let notFound = Problem(.notFound, detail: "app \(publicID) not found")
        guard let appID = PublicID.parseApp(publicID) else { throw notFound }
        if let own = key.appID {
            guard own == appID else { throw notFound }
            guard key.role.allows(.admin) else {
                throw Problem(
                    .forbidden,
                    detail: "managing the app needs the admin role; the key has \(key.role.rawValue)"
                )
            }
        }
        do {
            return try await engine.apps.app(appID)
        } catch EngineError.notFound {
            throw notFound
        }
    }

    /// Throws 403 unless the request's key is a deployment key.
    func requireDeploymentKey() throws {
        guard let key = try scope.apiKey else { throw Problem(.unauthorized) }
        guard key.isDeploymentKey else {
            throw Problem(
                .forbidden,
                detail: "creating apps needs a deployment key (printed on the service's first start)"
            )
        }
    }

    /// A `Link` header for the next page of a list, or `nil` at the end.
    func nextLink(_ path: String, cursor: String?, limit: Int, query: [String: String?] = [:]) -> String? {
        guard let cursor else { return nil }
        var components = URLComponents()
        components.path = path
        var items = query.compactMap { key, value in value.map { URLQueryItem(name: key, value: $0) } }.sorted {
            $0.name < $1.name
        }
        items.append(URLQueryItem(name: "limit", value: String(limit)))
        items.append(URLQueryItem(name: "after", value: cursor))
        components.queryItems = items
        return "<\(components.string ?? path)>; rel=\"next\""
    }
}
