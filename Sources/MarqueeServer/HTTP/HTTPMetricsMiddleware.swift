import HTTPTypes
import Hummingbird

/// The outermost middleware: counts every answer by method, route and status
/// (`marquee_http_requests_total`) and times it by method and route
/// (`marquee_http_request_duration_seconds`), problem documents and 404s included.
///
/// `route` is the template the router matched (`/v1/events/{eventKey}`, as in `openapi.yaml`:
/// the generated routes are registered by it), never the path: paths carry IDs and event keys,
/// and every distinct value would be a series of its own. A request no route matches is counted
/// under `unmatched`, whatever its path.
struct HTTPMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: HTTPMetrics

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let status: Int
        let response: Response
        do {
            response = try await next(request, context)
            status = response.status.code
        } catch {
            // The request-ID middleware inside answers every error with a problem document; what
            // still arrives here (a cancellation) is recorded as the server's failure.
            let code = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.record(method: request.method, route: Self.route(context), status: code, since: started)
            throw error
        }
        metrics.record(method: request.method, route: Self.route(context), status: status, since: started)
        return response
    }

    /// The matched template; read after the responder ran, because the router sets it for a
    /// request no route matches only then.
    static func route(_ context: Context) -> String {
        guard let path = context.endpointPath, path != "NotFound" else { return HTTPMetrics.unmatched }
        return path
    }
}
