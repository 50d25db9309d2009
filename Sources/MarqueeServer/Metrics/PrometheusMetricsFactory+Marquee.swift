import Prometheus

extension PrometheusMetricsFactory {
    /// The factory every metric of a server is made with: `registry`'s, with duration buckets that
    /// resolve the latencies Marquee is held to (a broadcast's p99 under 5 ms, a channel-ID read's
    /// under 10 ms, a registration's under 25 ms: BENCHMARKS.md) as well as the seconds of a slow
    /// store or APNs. swift-prometheus' default starts at 5 ms, where `histogram_quantile` places a
    /// broadcast answered in 1.5 ms anywhere below 5 ms, so the dashboard's p50 and p99 of the
    /// request path said nothing about those targets.
    static func marquee(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = latencyBuckets
        return factory
    }

    /// From a quarter of a millisecond to ten seconds: finest where the targets are.
    static let latencyBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(3),
        .milliseconds(4), .milliseconds(5), .microseconds(7500), .milliseconds(10), .milliseconds(15),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]
}
