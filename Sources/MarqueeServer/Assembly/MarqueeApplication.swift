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
    /// What the router's middleware and the answers written on the event loop
    /// (`EventLoopAnswerHandler`) share: one count of requests, one record of failed
    /// authentications, one set of rendered channel answers, the contract.
    struct SharedParts: Sendable {
        let metrics: HTTPMetrics
        let failures: AuthenticationFailures
        let channelAnswers: RenderedChannelAnswers
        let contract: APIContract
        let date = HTTPDateHeader()

        init(configuration: ServerConfiguration, metrics: PrometheusCollectorRegistry) throws {
            self.contract = try APIContract.builtIn()
            self.metrics = HTTPMetrics(factory: PrometheusMetricsFactory.marquee(registry: metrics))
            self.failures = AuthenticationFailures(settings: configuration.authenticationThrottle)
            self.channelAnswers = RenderedChannelAnswers(capacity: configuration.engine.channelAnswerCacheSize)
        }
    }

    /// The server's name in every answer's `Server` header.
    static let serverName = "marquee"

    /// The answers written on the event loop, with the router's shared parts.
    static func eventLoopAnswers(
        engine: MarqueeEngine,
        configuration: ServerConfiguration,
        shared: SharedParts,
        logger: Logger
    ) throws -> EventLoopAnswers {
        let template = TokenRegistrationAnswer.route
        guard let registration = shared.contract.operation(template: template, method: .put) else {
            throw ConfigurationError(key: "openapi", "the OpenAPI document has no PUT \(template)")
        }
        let chain = EventLoopAnswerChain(
            metrics: shared.metrics,
            serverName: serverName,
            date: shared.date,
            logger: logger
        )
        return EventLoopAnswers(
            channelReads: ChannelReadAnswer(
                apps: engine.apps,
                events: engine.events,
                failures: shared.failures,
                rendered: shared.channelAnswers,
                cacheControl: configuration.channelCacheControl,
                chain: chain
            ),
            registrations: TokenRegistrationAnswer(
                apps: engine.apps,
                tokens: engine.tokens,
                failures: shared.failures,
                operation: registration,
                maximumBodyBytes: configuration.maxBodyBytes,
                maximumDepth: configuration.maxJSONDepth,
                chain: chain
            )
        )
    }

    static func router(
        engine: MarqueeEngine,
        configuration: ServerConfiguration,
        metrics: PrometheusCollectorRegistry,
        shared: SharedParts,
        emulator: (any EmulatorInspection)? = nil,
        logger: Logger
    ) throws -> Router<MarqueeRequestContext> {
        // HEAD wherever GET is, as the document's `Allow` says (ContractMiddleware).
        let router = Router(context: MarqueeRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Outermost, so that it sees the final status of every request, problem documents included.
        router.add(
            middleware: HTTPMetricsMiddleware(metrics: shared.metrics)
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
                failures: shared.failures
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
                contract: shared.contract,
                maximumBodyBytes: configuration.maxBodyBytes
            )
        )
        // The channel-ID read, checked as above, answered from memory without the generated route.
        router.add(
            middleware: ChannelReadMiddleware(
                events: engine.events,
                cacheControl: configuration.channelCacheControl,
                answers: shared.channelAnswers
            )
        )
        // A device's own token registration, checked as above, without the generated route.
        router.add(middleware: TokenRegistrationMiddleware(tokens: engine.tokens))
        router.add(middleware: IdempotencyMiddleware(keys: engine.idempotency))
        // A batch of tokens, checked as above and kept for its Idempotency-Key, without the
        // generated route.
        router.add(middleware: TokenBatchMiddleware(tokens: engine.tokens))
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
