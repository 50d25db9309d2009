import CoreMetrics
import MarqueeCore
import NIOCore
import Synchronization

/// What an `APNSClient` reports through swift-metrics, to the factory of its configuration:
///
/// - `marquee_apns_pushes_total{kind,outcome,reason}`: every push's final outcome (after the
///   client's own retries): `accepted`, `rejected` (APNs answered with `reason`), `uncertain`
///   (written and never answered: APNs may have delivered it; `reason` "none") or `failed` (never
///   written: no connection, shut down; `reason` "none")
/// - `marquee_apns_request_duration_seconds{kind}`: each attempt, from its write to APNs' answer
/// - `marquee_apns_connections{environment}`: connections whose handshake completed, not yet closed
/// - `marquee_apns_streams_in_flight{environment}`: requests written and not yet answered
/// - `marquee_apns_connection_streams_in_flight{environment}`: a histogram of the requests in
///   flight on one connection, observed each time a batch was written to it (the connection's peaks:
///   what a reset of it would leave uncertain)
/// - `marquee_apns_connection_concurrency_limit{environment}`: a histogram of that connection's
///   concurrency limit at the same moments (its stream budget under the fixed window)
/// - `marquee_apns_batch_wait_seconds{environment,on}`: each time a fan-out's batch could have sent
///   more and waited instead: on its `source` (the connections had room, the next push was not
///   there yet: the caller's pages, a store read) or on its `consumer` (its outcomes were not being
///   taken fast enough, so it stopped sending). Where a fan-out slower than its connections allow
///   loses its time.
///
/// Channel management requests are not pushes: they count towards connections and streams only.
///
/// The hot path touches only handlers made here, in arrays indexed by kind: no lookup, no
/// allocation per push. Rejections, which are rare, find theirs in a locked dictionary. Several
/// clients (one per app key and environment) share the same series: the factory hands out one
/// handler per name and labels, and the gauges move by differences (`Meter.increment`), never by
/// setting a client's own total.
final class APNSClientMetrics: Sendable {
    static let pushes = "marquee_apns_pushes_total"
    static let requestDuration = "marquee_apns_request_duration_seconds"
    static let connections = "marquee_apns_connections"
    static let streamsInFlight = "marquee_apns_streams_in_flight"
    static let connectionStreamsInFlight = "marquee_apns_connection_streams_in_flight"
    static let connectionConcurrencyLimit = "marquee_apns_connection_concurrency_limit"
    static let batchWait = "marquee_apns_batch_wait_seconds"

    /// What a batch that could have sent more waited on (`marquee_apns_batch_wait_seconds{on}`).
    enum BatchWait: Int, CaseIterable {
        /// The connections had room and the batch's input had no push at hand.
        case source
        /// The batch's outcomes filled the buffer its consumer had not taken yet.
        case consumer
    }

    private let factory: any MetricsFactory
    private let accepted: [Counter]
    private let failed: [Counter]
    private let uncertain: [Counter]
    private let durations: [CoreMetrics.Timer]
    private let rejected = Mutex<[RejectionKey: Counter]>([:])
    let connections: Meter
    let streamsInFlight: Meter
    private let connectionStreams: Recorder
    private let connectionLimit: Recorder
    private let batchWaits: [CoreMetrics.Timer]

    private struct RejectionKey: Hashable {
        var kind: APNSPushKind
        var reason: String
    }

    init(factory: any MetricsFactory, environment: APNSEnvironment) {
        self.factory = factory
        accepted = APNSPushKind.allCases.map {
            Self.pushCounter(factory, kind: $0, outcome: "accepted", reason: "none")
        }
        failed = APNSPushKind.allCases.map { Self.pushCounter(factory, kind: $0, outcome: "failed", reason: "none") }
        uncertain = APNSPushKind.allCases.map {
            Self.pushCounter(factory, kind: $0, outcome: "uncertain", reason: "none")
        }
        durations = APNSPushKind.allCases.map {
            CoreMetrics.Timer(label: Self.requestDuration, dimensions: [("kind", $0.description)], factory: factory)
        }
        connections = Meter(
            label: Self.connections,
            dimensions: [("environment", environment.rawValue)],
            factory: factory
        )
        streamsInFlight = Meter(
            label: Self.streamsInFlight,
            dimensions: [("environment", environment.rawValue)],
            factory: factory
        )
        connectionStreams = Recorder(
            label: Self.connectionStreamsInFlight,
            dimensions: [("environment", environment.rawValue)],
            aggregate: true,
            factory: factory
        )
        connectionLimit = Recorder(
            label: Self.connectionConcurrencyLimit,
            dimensions: [("environment", environment.rawValue)],
            aggregate: true,
            factory: factory
        )
        batchWaits = BatchWait.allCases.map {
            CoreMetrics.Timer(
                label: Self.batchWait,
                dimensions: [("environment", environment.rawValue), ("on", "\($0)")],
                factory: factory
            )
        }
    }

    private static func pushCounter(
        _ factory: any MetricsFactory,
        kind: APNSPushKind,
        outcome: String,
        reason: String
    ) -> Counter {
        Counter(
            label: pushes,
            dimensions: [("kind", kind.description), ("outcome", outcome), ("reason", reason)],
            factory: factory
        )
    }

    /// A push's final outcome. A request the caller abandoned (`cancelled`) was not wanted any
    /// more and is not counted.
    func recordOutcome(_ kind: APNSPushKind, _ result: Result<APNSResponse, APNSError>) {
        switch result {
        case .success(let response) where response.isSuccess:
            accepted[kind.rawValue].increment()
        case .success(let response):
            recordRejection(kind, reason: response.rejection.reason)
        case .failure(.rejected(let rejection)):
            recordRejection(kind, reason: rejection.reason)
        case .failure(.cancelled):
            break
        case .failure(.uncertain):
            uncertain[kind.rawValue].increment()
        case .failure:
            failed[kind.rawValue].increment()
        }
    }

    /// Pushes that failed without being sent (no connection could be made for a batch).
    func recordFailed(_ kind: APNSPushKind, count: Int = 1) {
        failed[kind.rawValue].increment(by: count)
    }

    private func recordRejection(_ kind: APNSPushKind, reason: APNSErrorReason) {
        // APNs' reasons are a small vocabulary; an answer without one (an empty or foreign body) is
        // "none", and an overlong one is cut so that a misbehaving server cannot mint series.
        let text = reason.reasonString.isEmpty ? "none" : String(reason.reasonString.prefix(64))
        let key = RejectionKey(kind: kind, reason: text)
        let counter = rejected.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Self.pushCounter(factory, kind: kind, outcome: "rejected", reason: text)
            counters[key] = counter
            return counter
        }
        counter.increment()
    }

    /// One connection right after a batch was written to it: its requests in flight and its limit.
    func recordConnectionLoad(inFlight: Int, limit: Int) {
        connectionStreams.record(inFlight)
        connectionLimit.record(limit)
    }

    /// A batch waited on `wait` from `since` until now.
    func recordBatchWait(_ wait: BatchWait, since: NIODeadline) {
        batchWaits[wait.rawValue].recordNanoseconds(max(0, (NIODeadline.now() - since).nanoseconds))
    }

    /// One attempt's time from its write to APNs' answer.
    func recordDuration(_ kind: APNSPushKind, nanoseconds: Int64) {
        durations[kind.rawValue].recordNanoseconds(nanoseconds)
    }
}
