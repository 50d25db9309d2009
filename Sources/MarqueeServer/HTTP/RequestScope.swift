import Logging
import MarqueeCore

/// What the handlers of one request know about it beyond their generated input: its ID, its logger
/// (the ID in every line), the API key that authenticated it and the key's app as authentication
/// found it. The generated handlers get no
/// request context, so the middleware binds this as a task-local value around them.
struct RequestScope: Sendable {
    var requestID: String
    var logger: Logger
    var apiKey: APIKey?
    var app: App?

    @TaskLocal static var current: RequestScope?
}
