import Hummingbird
import Logging
import MarqueeAPI
import MarqueeEngine
import OpenAPIHummingbird
import OpenAPIRuntime
import Prometheus

/// The HTTP side of the service: the generated routes over the engine, behind request metrics,
/// request IDs and problem documents, authentication, body limits, then the OpenAPI document's
/// contract (methods, roles, parameters, nulls): a request is authenticated (and its route matched)
/// on its headers, before any byte of its body is read; the channel-ID read and a device's token
/// registration are answered there (`ChannelReadMiddleware`, `TokenRegistrationMiddleware`). And
/// the web console's files.
enum MarqueeApplication {
    static func router(
        engine: MarqueeEngine,
        configuration: ServerConfiguration,
        metrics: PrometheusCollectorRegistry,
        emulator: (any EmulatorInspection)? = nil,
        logger: Logger
    ) throws -> Router<MarqueeRequestContext> {
        // HEAD wherever GET is, as the document's `Allow` says (ContractMiddleware).
        let router = Router(context: MarqueeRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Outermost, so that it sees the final status of every request, problem documents included.
        router.add(
            middleware: HTTPMetricsMiddleware(
                metrics: HTTPMetrics(factory: PrometheusMetricsFactory(registry: metrics))
            )
        )
        router.add(middleware: RequestIDMiddleware(logger: logger))
        router.add(
            middleware: MetricsAccessMiddleware(
                enabled: configuration.metricsEnabled,
                bearerToken: configuration.metricsBearerToken
            )
        )
        router.add(
            middleware: AuthenticationMiddleware(
                apps: engine.apps,
                failures: AuthenticationFailures(settings: configuration.authenticationThrottle)
            )
        )
        router.add(
            middleware: BodyLimitMiddleware(
                maximumBytes: configuration.maxBodyBytes,
                maximumDepth: configuration.maxJSONDepth
            )
        )
        router.add(
            middleware: ContractMiddleware(
                contract: try APIContract.builtIn(),
                maximumBodyBytes: configuration.maxBodyBytes
            )
        )
        // The channel-ID read, checked as above, answered from memory without the generated route.
        router.add(
            middleware: ChannelReadMiddleware(
                events: engine.events,
                cacheControl: configuration.channelCacheControl,
                answers: RenderedChannelAnswers(capacity: configuration.engine.channelAnswerCacheSize)
            )
        )
        // A device's own token registration, checked as above, without the generated route.
        router.add(middleware: TokenRegistrationMiddleware(tokens: engine.tokens))
        router.add(middleware: IdempotencyMiddleware(keys: engine.idempotency))
        try OpenAPIDocumentRoute().register(on: router)
        ConsoleRoute.register(on: router)
        try APIHandler(engine: engine, configuration: configuration, metrics: metrics, emulator: emulator)
            .registerHandlers(
                on: router,
                configuration: .init(
                    dateTranscoder: RFC3339DateTranscoder(),
                    jsonEncodingOptions: JSONAnswerStyle.openAPI
                ),
                middlewares: [VerbatimHeadersMiddleware()]
            )
        return router
    }
}
