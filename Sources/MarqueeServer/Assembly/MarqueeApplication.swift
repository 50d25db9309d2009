import Hummingbird
import Logging
import MarqueeAPI
import MarqueeEngine
import OpenAPIHummingbird

/// The HTTP side of the service: the generated routes over the engine, behind request IDs and
/// problem documents, body limits and authentication.
enum MarqueeApplication {
    static func router(engine: MarqueeEngine, configuration: ServerConfiguration, logger: Logger) throws -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: RequestIDMiddleware(logger: logger))
        router.add(middleware: BodyLimitMiddleware(maximumBytes: configuration.maxBodyBytes, maximumDepth: configuration.maxJSONDepth))
        router.add(middleware: AuthenticationMiddleware(apps: engine.apps))
        router.add(middleware: IdempotencyMiddleware(keys: engine.idempotency))
        try OpenAPIDocumentRoute().register(on: router)
        try APIHandler(engine: engine, configuration: configuration).registerHandlers(on: router, middlewares: [VerbatimHeadersMiddleware()])
        return router
    }
}
