import MarqueeClient

/// The exit codes of the client commands, so that scripts can tell outcomes apart. Documented in
/// `marquee --help` and the README; keep the three in step.
enum CLIExitCode: Int32, CaseIterable, Sendable {
    case ok = 0
    /// Anything else: a bug, an answer the API document does not describe.
    case unexpected = 1
    /// Bad usage or configuration: an unknown option, a missing API key, an unreadable file.
    /// argument-parser's own usage errors (which it gives 64, EX_USAGE) are mapped to this too, so
    /// that every usage error has one code, the one `marquee serve` already uses for configuration.
    case usage = 2
    /// 401 or 403: the key is missing, wrong, revoked, or its role may not do this.
    case authentication = 3
    /// 404: no such app, event, channel, token or job for this key.
    case notFound = 4
    /// 400, 409, 412, 413 or 422: the server refused the input or the resource's state.
    case rejected = 5
    /// No answer, 429 or 5xx: the server (or APNs behind it) is unreachable or unavailable; retrying
    /// later may succeed.
    case unavailable = 6
    /// Partial success: a 207, an import where some rows were rejected, a start job where some
    /// deliveries failed.
    case partial = 7
    /// Stopped by Ctrl-C (SIGINT) or SIGTERM before it finished: 128 + SIGINT, as shells report it.
    case interrupted = 130

    init(_ error: MarqueeClientError) {
        switch error.kind {
        case .unreachable: self = .unavailable
        case .unexpectedResponse, .cancelled: self = .unexpected
        case .problem:
            switch error.status ?? 0 {
            case 401, 403: self = .authentication
            case 404: self = .notFound
            case 400, 409, 410, 412, 413, 415, 422: self = .rejected
            case 429, 500...599: self = .unavailable
            default: self = .unexpected
            }
        }
    }

    /// One line per code, for `marquee --help` and the README.
    static let table = """
        Exit codes:
            0  success
            1  unexpected error
            2  usage or configuration error (bad option, no API key, unreadable file)
            3  authentication or authorization refused (401, 403)
            4  not found (404)
            5  conflict or rejected input (400, 409, 412, 413, 422)
            6  server unreachable or unavailable (no answer, 429, 5xx): retry later
            7  partial success (207, import with rejected rows, job with failed sends)
          130  interrupted by Ctrl-C or SIGTERM before it finished
        """
}
