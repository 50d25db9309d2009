import Configuration
import MarqueeEngine

extension JobWorkerConfiguration {
    /// The job worker's keys, `jobs.*`.
    init(reader: ConfigReader) throws(ConfigurationError) {
        self.init(
            leaseDuration: .milliseconds(
                Int64(try reader.integer("jobs.leaseMilliseconds", default: 30_000, range: 100...3_600_000))
            ),
            pollInterval: .milliseconds(
                Int64(try reader.integer("jobs.pollMilliseconds", default: 2_000, range: 10...600_000))
            ),
            stallTimeout: .milliseconds(
                Int64(try reader.integer("jobs.stallTimeoutMilliseconds", default: 60_000, range: 100...3_600_000))
            ),
            commitInterval: .milliseconds(
                Int64(try reader.integer("jobs.commitIntervalMilliseconds", default: 250, range: 1...600_000))
            ),
            concurrency: try reader.integer("jobs.concurrency", default: 4, range: 1...64),
            pageSize: try reader.integer("jobs.pageSize", default: 1_000, range: 1...100_000),
            partitions: try reader.integer("jobs.partitions", default: 8, range: 1...1_024),
            window: reader.raw("jobs.window") == nil
                ? nil : try reader.integer("jobs.window", default: 1, range: 1...100_000),
            batchSize: try reader.integer("jobs.batchSize", default: 500, range: 1...100_000),
            maximumAttemptsPerToken: try reader.integer("jobs.maxAttemptsPerToken", default: 3, range: 1...1_000),
            retryBaseDelay: .milliseconds(
                Int64(try reader.integer("jobs.retryBaseMilliseconds", default: 1_000, range: 1...600_000))
            ),
            retryMaximumDelay: .milliseconds(
                Int64(try reader.integer("jobs.retryMaxMilliseconds", default: 60_000, range: 1...3_600_000))
            ),
            uncertainStarts: try reader.parsed(
                "jobs.uncertainStarts",
                default: .confirm,
                expected: "confirm, skip or resend"
            ) {
                UncertainStartPolicy(rawValue: $0)
            },
            confirmation: StartConfirmation(
                arrivalGrace: .seconds(
                    try reader.integer("jobs.confirmation.graceSeconds", default: 60, range: 0...86_400)
                ),
                window: .seconds(try reader.integer("jobs.confirmation.windowSeconds", default: 600, range: 1...86_400))
            ),
            startCollapseIDs: try reader.flag("jobs.startCollapseIDs", default: true)
        )
    }
}
