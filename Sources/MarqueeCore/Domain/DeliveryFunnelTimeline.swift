import Foundation

/// An event's delivery funnel over time, per environment: for each stage in `stages`, how many
/// devices are in it as of the end of each bucket of time, counted from the time each device
/// entered it. Buckets run from the event's first send to `until` (now, or the event's end, or the
/// last moment a stage counts a device, whichever is latest), so the last point of each stage
/// equals the funnel's total for that stage (`DeliveryFunnel`).
///
/// The times come from the rows the funnel counts: a device is `sent` at its first send (the
/// ledger's `sent_at`, or a delivery's that ended rejected, uncertain or failed), `accepted` and
/// `lateJoinersStarted` when APNs answered (the ledger's `started_at`; a start the device confirmed
/// after an uncertain one, when it was confirmed), `showing` and `ended` since the report that moved
/// it into that state. A device that moves on leaves its last stage: a device that ended no longer
/// counts as showing at any point, as the funnel counts each device in its last reported state.
public struct DeliveryFunnelTimeline: Sendable, Hashable {
    /// The stages a device enters at a known time, in the order a chart lists them. Rejected,
    /// uncertain and failed are not among them (a later start can take a device out of them), nor
    /// targeted (an audience, not devices reached) or absent (the device's own word on a start that
    /// is not there).
    public static let stages: [FunnelStage] = [.sent, .accepted, .showing, .ended, .lateJoinersStarted]

    /// At most this many buckets, whatever the span.
    public static let maximumPoints = 240

    /// A bucket's width for a span from the first send to `until`: the span over
    /// `maximumPoints - 1`, rounded up to a whole second, 1 s at least, so that the span's last
    /// moment falls in bucket `maximumPoints - 1` at most. The stores compute the same in their
    /// statement (which knows the span only as it reads the rows); the contract suite holds them to
    /// this.
    public static func stepMicroseconds(spanMicroseconds: Int64) -> Int64 {
        let divisor = stepDivisorMicroseconds
        return 1_000_000 * max(1, (max(0, spanMicroseconds) + divisor - 1) / divisor)
    }

    /// `(maximumPoints - 1)` seconds in microseconds: the span over this, rounded up, is a bucket's
    /// width in whole seconds.
    public static let stepDivisorMicroseconds = Int64(maximumPoints - 1) * 1_000_000

    /// The buckets' time axis.
    public struct Buckets: Sendable, Hashable {
        /// The event's first send: the start of bucket 0.
        public var origin: Date
        /// Each bucket's width, in microseconds (whole seconds).
        public var stepMicroseconds: Int64
        /// The end of the last bucket.
        public var until: Date
        /// How many buckets: the last holds `until`.
        public var count: Int

        public init(origin: Date, stepMicroseconds: Int64, until: Date, count: Int) {
            self.origin = origin
            self.stepMicroseconds = stepMicroseconds
            self.until = until
            self.count = count
        }

        /// The time bucket `index`'s counts are as of: its end, or `until` for the last.
        public func end(of index: Int) -> Date {
            guard index < count - 1 else { return until }
            return origin.addingTimeInterval(Double(Int64(index + 1) * stepMicroseconds) / 1_000_000)
        }
    }

    /// One environment's counts: per stage, one cumulative count per bucket.
    public struct Series: Sendable, Hashable {
        public var environment: APNSEnvironment
        public var counts: [FunnelStage: [Int64]]

        public init(environment: APNSEnvironment, counts: [FunnelStage: [Int64]] = [:]) {
            self.environment = environment
            self.counts = counts
        }

        /// The stage's cumulative counts, `bucketCount` long (zeros where the stage counts nobody).
        public func counts(of stage: FunnelStage, bucketCount: Int) -> [Int64] {
            counts[stage] ?? Array(repeating: 0, count: bucketCount)
        }
    }

    /// `nil` before the event's first send: nothing to draw yet.
    public var buckets: Buckets?
    public var series: [Series]

    public init(buckets: Buckets?, series: [Series]) {
        self.buckets = buckets
        self.series = series
    }
}
