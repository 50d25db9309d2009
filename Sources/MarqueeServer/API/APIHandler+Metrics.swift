import MarqueeAPI
import OpenAPIRuntime
import Prometheus

extension APIHandler {
    /// Who may read it is `MetricsAccessMiddleware`'s decision, made before this runs.
    func getMetrics(_ input: Operations.GetMetrics.Input) async throws -> Operations.GetMetrics.Output {
        .ok(.init(body: .plainText(HTTPBody(metrics.emitToString()))))
    }
}
