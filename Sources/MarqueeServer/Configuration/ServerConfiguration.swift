import Configuration
import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore
import MarqueeEngine
import SystemPackage

/// Everything `marquee serve` is configured by. Every key can come from a file, the environment
/// (`MARQUEE_` + the key in upper snake case: `http.port` → `MARQUEE_HTTP_PORT`) or a flag.
///
/// Keys:
/// - `http.host` (127.0.0.1), `http.port` (8080), `http.maxBodyBytes` (4 MiB), `http.maxJSONDepth` (32)
/// - `http.idleTimeoutSeconds` (60): a connection with no request under way is closed after this
///   long; `http.headerTimeoutSeconds` (10): a request's headers must arrive within this of its
///   first byte; `http.bodyTimeoutSeconds` (60): its body within this of its headers
/// - `http.maxConnections` (1000): connections this replica keeps open; past them a new one is
///   answered 503 (`Retry-After: 1`) and closed
/// - `http.eventLoopAnswers` (true): remembered channel-ID reads and devices' token registrations
///   are answered on the connection's event loop (`EventLoopAnswerHandler`); false sends every
///   request through Hummingbird
/// - `auth.throttle.failures` (20), `auth.throttle.windowSeconds` (60): a client address whose
///   authentications failed this many times within the window of its first failure is answered
///   429 (`Retry-After`) until the window ends; 0 failures: no throttle (behind a proxy, where
///   every client has the proxy's address)
/// - `database.url`: `postgres://…`; absent, the embedded SQLite at `sqlite.path` (./data/marquee.sqlite)
/// - `database.maxConnections` (20): this replica's PostgreSQL pool at most, opened as needed; N
///   replicas open N times as many
/// - `database.idleTimeoutSeconds` (10): a pooled connection idle this long is closed
/// - `database.callTimeoutSeconds` (30): a store call PostgreSQL has not answered within this is
///   abandoned and fails (`StoreCallTimedOut`)
/// - `database.keepAliveSeconds` (0: never): an idle pooled connection runs `SELECT 1` after this long
/// - `database.startupWaitSeconds` (60): how long a start waits for an unreachable PostgreSQL
/// - `sql.dir`: the folder with `postgres/` and `sqlite/` migrations
/// - `secrets.masterKeys` (secret): `id:base64[,id:base64…]`, current first; seals signing keys.
///   Absent on SQLite, a key is generated once into `data.dir`/master.key; required on PostgreSQL.
/// - `data.dir` (./data): the embedded defaults' folder
/// - `apns.target`: `emulator` (default: in-process), `apple`, or `custom` with
///   `apns.sandbox.pushURL`, `apns.sandbox.managementURL`, `apns.production.pushURL`,
///   `apns.production.managementURL` (`https://host:port` or `http://` for h2c) and `apns.caFile`
/// - `emulator.inspectionURL`: with `custom` APNs that is a Marquee emulator, its inspection API
///   (`http://host:port`), for `/v1/emulator` (the console's device wall); the in-process one needs none
/// - `apns.connections` (2), `apns.streamsPerConnection` (1000): HTTP/2 connections per app key and
///   environment, and a ceiling on each one's concurrent streams below what APNs allows
/// - `apns.adaptiveConcurrency` (true): each connection keeps only what the path needs in flight,
///   from the latency of its answers, never below `apns.concurrencyFloor` (20); false: every
///   connection fills its stream budget
/// - `apns.minimumWriteBatch` (8): a connection with that many requests in flight takes more once
///   that many streams are free (at most half its limit), so that requests leave in batches; 1: at once
/// - `channels.limit` (10000), `channels.warningFraction` (0.9), `channels.creationTimeoutSeconds`
///   (120), `channels.orphanGraceSeconds` (600), `channels.janitorIntervalSeconds` (30)
/// - `channels.cacheSeconds` (60): `Cache-Control: max-age` of channel-ID reads
/// - `channels.answerCacheSize` (10000): channel-ID answers kept in memory, forgotten when their
///   event or channel changes on any replica (0: read every time)
/// - `tokens.maxBatch` (10000)
/// - `tokens.registrationWriters` (2)
/// - `presence.reportsPerMinute` (10): reports one device may send for one event
///   (`PUT /v1/events/{eventKey}/presence/{token}`) in a fixed minute that begins with its first;
///   past them it is answered 429 (`Retry-After`: until that minute ends)
/// - `auth.cacheSeconds` (5): how long an authenticated API key and its app are remembered at most;
///   a key revoked or an app changed on another replica is forgotten here when its NOTIFY arrives
///   (PostgreSQL), not after this time (0: never remembered)
/// - `broadcasts.priorityPolicy` (`standard`): `standard` (10 for important updates and those with
///   an alert, 5 for the rest), `immediate` (10 for all) or `normal` (5 unless important); an
///   event's own `priorityPolicy` wins
/// - `broadcasts.priorityBudgetPerHour` (30): priority-10 broadcasts per channel and hour; past it
///   broadcasts go at 5 and their answer says so
/// - `broadcasts.activityPriorityBudgetPerHour` (30), `broadcasts.frequentActivityPriorityBudgetPerHour`
///   (120, for activities whose app reported frequent pushes enabled): priority-10 device pushes per
///   activity on an update token in a fixed hour that begins with its first accepted one; past it
///   the activity's pushes go at 5 and the job counts them as `downgraded`. Apple's numbers are
///   unpublished: both are guesses to tune
/// - `jobs.leaseMilliseconds` (30000): a job's lease; a dead replica's job is taken over after it.
///   A run renews it every third of it and stops sending a fifth of it before it could lapse
/// - `jobs.stallTimeoutMilliseconds` (60000): a run without progress this long gives its lease up
/// - `jobs.commitIntervalMilliseconds` (250): a final outcome waits this long for its commit at most
/// - `jobs.pollMilliseconds` (2000), `jobs.concurrency` (4), `jobs.pageSize` (1000), `jobs.batchSize` (500),
/// `jobs.window` (the APNs client's),
///   `jobs.retryBaseMilliseconds` (1000), `jobs.retryMaxMilliseconds` (60000), `jobs.maxAttemptsPerToken` (3):
///   the job worker
/// - `jobs.partitions` (8): parts a start fan-out is split into, each leased on its own, so that
///   replicas share one fan-out
/// - `jobs.uncertainStarts` (`confirm`): what a start job does with a start written to APNs that
///   got no answer (the device may or may not have it): `confirm` (final as uncertain in the job,
///   then the device is asked: its app gets a background push and reports; showing is confirmed
///   and never sent again, absent gets the start once more with the latest content-state, no
///   answer within the window stays uncertain and is reported), `skip` (final as uncertain, never
///   sent again: a device may miss the start, none gets two) or `resend` (sent again in a later
///   round, through the start ledger: none misses it for want of an answer, one that had it gets two)
/// - `jobs.confirmation.graceSeconds` (60): under `confirm`, how long a start may take to arrive:
///   an `absent` report is weighed only once this has passed since the start was sent
/// - `jobs.confirmation.windowSeconds` (600): under `confirm`, how long the app of an uncertain
///   device is given to answer the background push (iOS delivers those at its discretion); past
///   it the device stays uncertain
/// - `jobs.startCollapseIDs` (true): every start push of an event carries the same
///   `apns-collapse-id` (`marquee-start-` and the event ID's 32 hex digits), so that APNs keeps only
///   the newest start of the event for an offline device; false: none
/// - `lateJoiners.ratePerSecond` (200): late-join starts (devices registering while an event is
///   live) a replica creates per second at most, a second's worth at once: a storm of
///   registrations is spread out and never starves broadcasts
/// - `timeline.channelLeadSeconds` (3600): how long before an automatic timeline's planned start
///   the event's channels are created; an event's `timeline.channelLeadSeconds` wins
/// - `timeline.endMarginSeconds` (900): how long before Apple's 8-hour limit an automatic timeline
///   sends the end nobody sent (its end comes 8 h minus this after the start); an event's
///   `timeline.endAfterSeconds` wins
/// - `metrics.enabled` (true): `GET /metrics` on the API port, Prometheus' text format
/// - `metrics.bearerToken` (secret): when set, `/metrics` answers only `Authorization: Bearer` it
/// - `log.format`: `text` (the default on a terminal) or `json` (the default otherwise: one JSON
///   object per line, for a log collector); `log.level` (info): trace, debug, info, notice,
///   warning, error or critical
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var maxBodyBytes: Int
    public var maxJSONDepth: Int
    /// Whether `EventLoopAnswerHandler` answers the kick-off's reads and registrations.
    public var eventLoopAnswers: Bool
    /// Connection deadlines and the cap on open connections.
    public var connectionLimits: ConnectionLimits
    /// Failed authentications per client address.
    var authenticationThrottle: AuthenticationThrottle<ContinuousClock.Instant>.Settings
    public var databaseURL: String?
    /// Connections this replica opens to PostgreSQL at most (its pool; one of them listens for jobs).
    public var databaseMaxConnections: Int
    /// How long a pooled connection may sit idle before it is closed.
    public var databaseIdleTimeoutSeconds: Double
    /// How long a store call may wait for PostgreSQL's answer before it is abandoned.
    public var databaseCallTimeoutSeconds: Double
    /// How long a pooled connection may sit idle before it runs a keep-alive query; 0: never.
    public var databaseKeepAliveSeconds: Double
    /// How long a start waits for PostgreSQL to become reachable before it gives up.
    public var databaseStartupWaitSeconds: Double
    public var sqlitePath: String
    public var sqlDirectory: String?
    public var dataDirectory: String
    /// The keyring text; a secret.
    public var masterKeys: String?
    public var apns: APNSTargetChoice
    /// Connections and streams of every APNs client, whatever the target.
    public var apnsTransport: APNSClientConfiguration.Transport
    /// `emulator.inspectionURL`: another process's emulator's inspection API, for `/v1/emulator`.
    public var emulatorInspectionURL: URL?
    public var engine: EngineConfiguration
    public var channelCacheSeconds: Int
    /// `Cache-Control` of channel-ID reads (`channels.cacheSeconds`).
    var channelCacheControl: String { "private, max-age=\(channelCacheSeconds)" }
    public var metricsEnabled: Bool
    /// The token `/metrics` asks for; a secret. `nil`: no authentication (scraped from inside the
    /// network, as the health checks are).
    public var metricsBearerToken: String?
    /// `nil` when not configured: the command line picks by whether standard error is a terminal.
    public var logFormat: LogFormat?
    public var logLevel: Logger.Level

    /// Where APNs is.
    public enum APNSTargetChoice: Sendable, Hashable {
        /// A Marquee APNs emulator run in this process.
        case emulator
        /// Apple's hosts.
        case apple
        /// Given endpoints (another emulator, a gateway); `caFile` trusts its certificate.
        case custom(endpoints: [String: String], caFile: String?)
    }

    public init(reader: ConfigReader) throws(ConfigurationError) {
        host = reader.raw("http.host") ?? "127.0.0.1"
        port = try reader.integer("http.port", default: 8080, range: 0...65535)
        maxBodyBytes = try reader.integer("http.maxBodyBytes", default: 4 << 20, range: 1024...(256 << 20))
        maxJSONDepth = try reader.integer("http.maxJSONDepth", default: 32, range: 2...512)
        eventLoopAnswers = try reader.flag("http.eventLoopAnswers", default: true)
        connectionLimits = ConnectionLimits(
            idleTimeout: .seconds(try reader.integer("http.idleTimeoutSeconds", default: 60, range: 1...86_400)),
            headerTimeout: .seconds(try reader.integer("http.headerTimeoutSeconds", default: 10, range: 1...3_600)),
            bodyTimeout: .seconds(try reader.integer("http.bodyTimeoutSeconds", default: 60, range: 1...3_600)),
            maximumConnections: try reader.integer("http.maxConnections", default: 1_000, range: 1...1_000_000)
        )
        authenticationThrottle = .init(
            limit: try reader.integer("auth.throttle.failures", default: 20, range: 0...1_000_000),
            window: .seconds(try reader.integer("auth.throttle.windowSeconds", default: 60, range: 1...86_400))
        )
        databaseURL = reader.raw("database.url", isSecret: true)
        databaseMaxConnections = try reader.integer("database.maxConnections", default: 20, range: 2...1000)
        databaseIdleTimeoutSeconds = try reader.positiveSeconds("database.idleTimeoutSeconds", default: 10)
        databaseCallTimeoutSeconds = try reader.positiveSeconds("database.callTimeoutSeconds", default: 30)
        databaseKeepAliveSeconds = try reader.seconds("database.keepAliveSeconds", default: 0)
        databaseStartupWaitSeconds = try reader.seconds("database.startupWaitSeconds", default: 60)
        if let url = databaseURL, !(url.hasPrefix("postgres://") || url.hasPrefix("postgresql://")) {
            throw ConfigurationError(
                key: "database.url",
                "must be a postgres:// URL (leave it out for the embedded SQLite)"
            )
        }
        dataDirectory = reader.raw("data.dir") ?? "./data"
        sqlitePath = reader.raw("sqlite.path") ?? (dataDirectory as NSString).appendingPathComponent("marquee.sqlite")
        sqlDirectory = reader.raw("sql.dir")
        masterKeys = reader.raw("secrets.masterKeys", isSecret: true)
        if databaseURL != nil && masterKeys == nil {
            throw ConfigurationError(
                key: "secrets.masterKeys",
                """
                is required with PostgreSQL (every replica seals signing keys with it): set \
                MARQUEE_SECRETS_MASTER_KEYS to id:base64-of-32-bytes
                """
            )
        }
        apns = try APNSTargetChoice(reader: reader)
        emulatorInspectionURL = try Self.emulatorInspectionURL(reader)
        apnsTransport = try Self.apnsTransport(reader)
        engine = try EngineConfiguration(reader: reader)
        channelCacheSeconds = try reader.integer("channels.cacheSeconds", default: 60, range: 0...86_400)
        metricsEnabled = try reader.flag("metrics.enabled", default: true)
        metricsBearerToken = reader.raw("metrics.bearerToken", isSecret: true)
        if let token = metricsBearerToken, token.isEmpty || token.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            throw ConfigurationError(key: "metrics.bearerToken", "must be printable ASCII without spaces")
        }
        logFormat =
            reader.raw("log.format") == nil
            ? nil
            : try reader.parsed("log.format", default: .text, expected: "text or json") {
                LogFormat(rawValue: $0.lowercased())
            }
        logLevel = try reader.parsed(
            "log.level",
            default: .info,
            expected: "trace, debug, info, notice, warning, error or critical"
        ) {
            Logger.Level(rawValue: $0.lowercased())
        }
    }

    static let customEndpointKeys = [
        "apns.sandbox.pushURL", "apns.sandbox.managementURL", "apns.production.pushURL",
        "apns.production.managementURL",
    ]

    /// The configuration of a given set of values (tests, the CLI), over the environment.
    public static func reading(
        _ values: [String: String],
        environment: Bool = true
    ) throws(ConfigurationError) -> ServerConfiguration {
        try ServerConfiguration(
            reader: ConfigurationSources.reader(values: values, environment: environment, secretKeys: secretKeys)
        )
    }
}

extension ServerConfiguration {
    /// The keys read as secrets wherever they are set.
    static let secretKeys: Set<String> = ["database.url", "secrets.masterKeys", "metrics.bearerToken"]

    /// Flags over the environment (`MARQUEE_…`) over a JSON file over defaults.
    public static func load(flags: [String: String], file: String?) async throws -> ServerConfiguration {
        try ServerConfiguration(
            reader: try await ConfigurationSources.reader(flags: flags, file: file, secretKeys: secretKeys)
        )
    }
}
