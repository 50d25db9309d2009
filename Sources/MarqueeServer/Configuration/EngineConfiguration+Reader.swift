import Configuration
import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEngine

extension EngineConfiguration {
    /// The engine's keys: `channels.*`, `tokens.maxBatch`, `broadcasts.*`, `jobs.*` (through
    /// `JobWorkerConfiguration`), `timeline.*`, `auth.cacheSeconds`, `lateJoiners.*`, `presence.*`.
    init(reader: ConfigReader) throws(ConfigurationError) {
        let policy = ChannelPolicy(
            limit: try reader.integer("channels.limit", default: APNSPayloadLimit.channelsPerApp, range: 1...1_000_000),
            warningFraction: try reader.parsed(
                "channels.warningFraction",
                default: 0.9,
                expected: "a fraction from 0 to 1"
            ) {
                Double($0).flatMap { (0...1).contains($0) ? $0 : nil }
            },
            creationTimeout: try reader.seconds("channels.creationTimeoutSeconds", default: 120),
            orphanGracePeriod: try reader.seconds("channels.orphanGraceSeconds", default: 600)
        )
        self.init(
            channels: policy,
            janitorInterval: .milliseconds(
                Int64(try reader.seconds("channels.janitorIntervalSeconds", default: 30) * 1000)
            ),
            funnelMetricsInterval: .milliseconds(
                Int64(try reader.seconds("metrics.funnelIntervalSeconds", default: 60) * 1000)
            ),
            maximumTokenBatch: try reader.integer("tokens.maxBatch", default: 10_000, range: 1...100_000),
            registrationWriters: try reader.integer("tokens.registrationWriters", default: 2, range: 1...64),
            broadcasts: BroadcastPolicy(
                priorityPolicy: try reader.parsed(
                    "broadcasts.priorityPolicy",
                    default: .standard,
                    expected: "standard, immediate or normal"
                ) { PriorityPolicy(rawValue: $0) },
                priorityBudgetPerHour: try reader.integer(
                    "broadcasts.priorityBudgetPerHour",
                    default: BroadcastPolicy.defaultPriorityBudgetPerHour,
                    range: 0...100_000
                ),
                activityBudget: ActivityPriorityBudget(
                    limitPerHour: try reader.integer(
                        "broadcasts.activityPriorityBudgetPerHour",
                        default: ActivityPriorityBudget.defaultLimitPerHour,
                        range: 0...100_000
                    ),
                    frequentLimitPerHour: try reader.integer(
                        "broadcasts.frequentActivityPriorityBudgetPerHour",
                        default: ActivityPriorityBudget.defaultFrequentLimitPerHour,
                        range: 0...100_000
                    )
                )
            ),
            jobs: try JobWorkerConfiguration(reader: reader),
            timeline: TimelinePolicy(
                channelLead: TimeInterval(
                    try reader.integer("timeline.channelLeadSeconds", default: 3600, range: 0...(7 * 24 * 3600))
                ),
                endMargin: TimeInterval(
                    try reader.integer("timeline.endMarginSeconds", default: 900, range: 0...(7 * 3600))
                )
            ),
            credentialLifetime: .seconds(try reader.integer("auth.cacheSeconds", default: 5, range: 0...3600)),
            channelAnswerCacheSize: try reader.integer(
                "channels.answerCacheSize",
                default: 10_000,
                range: 0...1_000_000
            ),
            lateJoiners: LateJoinConfiguration(
                ratePerSecond: try reader.integer("lateJoiners.ratePerSecond", default: 200, range: 1...100_000)
            ),
            presenceReports: .perMinute(try reader.integer("presence.reportsPerMinute", default: 10, range: 1...10_000))
        )
    }
}
