import Hummingbird
import Logging
import MarqueeAPI
import MarqueeEngine
import OpenAPIHummingbird
import Prometheus

/// The HTTP side of the service: the generated routes over the engine, behind request metrics,
/// request IDs and problem documents, body limits and authentication; and the web console.
enum MarqueeApplication {
    static func router(
        engine: MarqueeEngine,
        configuration: ServerConfiguration,
        metrics: PrometheusCollectorRegistry,
        emulator: (any EmulatorInspection)? = nil,
        logger: Logger
    ) throws -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        // Outermost, so that it sees the final status of every request, problem documents included.
        router.add(middleware: HTTPMetricsMiddleware(metrics: HTTPMetrics(factory: PrometheusMetricsFactory(registry: metrics))))
        router.add(middleware: RequestIDMiddleware(logger: logger))
        router.add(middleware: MetricsAccessMiddleware(enabled: configuration.metricsEnabled, bearerToken: configuration.metricsBearerToken))
        router.add(middleware: BodyLimitMiddleware(maximumBytes: configuration.maxBodyBytes, maximumDepth: configuration.maxJSONDepth))
        router.add(middleware: AuthenticationMiddleware(apps: engine.apps))
        router.add(middleware: IdempotencyMiddleware(keys: engine.idempotency))
        try OpenAPIDocumentRoute().register(on: router)
        ConsoleRoute.register(on: router)
        try APIHandler(engine: engine, configuration: configuration, metrics: metrics, emulator: emulator).registerHandlers(on: router, middlewares: [VerbatimHeadersMiddleware()])
        return router
    }
}
