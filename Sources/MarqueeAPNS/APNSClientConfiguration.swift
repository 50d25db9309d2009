import CoreMetrics
import Foundation
import MarqueeCore
import NIOCore

/// Everything an `APNSClient` needs: one signing key in one environment, and where to connect.
public struct APNSClientConfiguration: Sendable {
    public var environment: APNSEnvironment
    public var signingKey: APNSSigningKey
    /// Device pushes and broadcasts. Defaults to Apple's host for the environment.
    public var pushEndpoint: APNSEndpoint
    /// Channel management (2195 sandbox, 2196 production). Defaults to Apple's host.
    public var channelManagementEndpoint: APNSEndpoint
    /// The provider-token age at which a new one is signed: inside Apple's 20–60 minute window
    /// (clamped to it), 50 minutes by default. Tokens are issued on fixed windows of this length
    /// counted from the Unix epoch (see `APNSProviderTokenCache`), so every replica configured with
    /// the same value presents the same `iat` and renews at the same moment.
    public var tokenRenewalAge: TimeInterval
    public var retryPolicy: APNSRetryPolicy
    public var transport: Transport
    /// Where the client's metrics go (`APNSClientMetrics` lists them): swift-metrics' global
    /// factory unless the application passes its own (the server passes its Prometheus registry's,
    /// so that every server in a process has its own `/metrics`).
    public var metricsFactory: any MetricsFactory

    /// Connection and flow settings of the pools.
    public struct Transport: Sendable, Hashable {
        /// Long-lived connections per endpoint (APNs suggests spreading load over several).
        public var connectionsPerEndpoint: Int
        /// A ceiling on streams per connection whatever the server's SETTINGS allow.
        public var maximumStreamsPerConnection: Int
        /// Each connection keeps only what the path needs in flight, from the latency of its answers
        /// (`APNSConcurrencyLimit`), within its stream budget; `false`: the whole budget, always.
        /// What a connection reset leaves uncertain is what was in flight.
        public var adaptiveConcurrency: Bool
        /// The least an adaptive connection keeps in flight, whatever the latency says.
        public var concurrencyFloor: Int
        /// A connection with at least this many requests in flight takes more only once this many
        /// streams are free (at most half its concurrency limit): its answers free them within
        /// moments, and one write of a batch costs the client, TLS and the server less than several
        /// writes of a few (`APNSDispatchRound.writableStreams`). 1: every free stream at once.
        public var minimumWriteBatch: Int
        /// Requests admitted and unanswered per endpoint; batches wait beyond it.
        public var maximumOutstandingRequests: Int
        /// Requests a single batch keeps outstanding.
        public var batchWindow: Int
        /// Outcome chunks a batch buffers for a slow consumer before it stops sending.
        public var batchBufferedChunks: Int
        /// Idle time after which a connection is PINGed; an unanswered PING closes it.
        public var pingInterval: TimeAmount
        public var connectTimeout: TimeAmount
        /// How long a connection that received GOAWAY may take to answer its remaining streams.
        public var drainTimeout: TimeAmount

        public init(
            connectionsPerEndpoint: Int = 2,
            maximumStreamsPerConnection: Int = 1000,
            adaptiveConcurrency: Bool = true,
            concurrencyFloor: Int = 20,
            minimumWriteBatch: Int = 8,
            maximumOutstandingRequests: Int = 10_000,
            batchWindow: Int = 4_000,
            batchBufferedChunks: Int = 64,
            pingInterval: TimeAmount = .seconds(60),
            connectTimeout: TimeAmount = .seconds(10),
            drainTimeout: TimeAmount = .seconds(5)
        ) {
            self.connectionsPerEndpoint = max(1, connectionsPerEndpoint)
            self.maximumStreamsPerConnection = max(1, maximumStreamsPerConnection)
            self.adaptiveConcurrency = adaptiveConcurrency
            self.concurrencyFloor = max(1, concurrencyFloor)
            self.minimumWriteBatch = max(1, minimumWriteBatch)
            self.maximumOutstandingRequests = max(1, maximumOutstandingRequests)
            self.batchWindow = max(1, batchWindow)
            self.batchBufferedChunks = max(2, batchBufferedChunks)
            self.pingInterval = pingInterval
            self.connectTimeout = connectTimeout
            self.drainTimeout = drainTimeout
        }
    }

    public init(
        environment: APNSEnvironment,
        signingKey: APNSSigningKey,
        pushEndpoint: APNSEndpoint? = nil,
        channelManagementEndpoint: APNSEndpoint? = nil,
        tokenRenewalAge: TimeInterval = 50 * 60,
        retryPolicy: APNSRetryPolicy = APNSRetryPolicy(),
        transport: Transport = Transport(),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.environment = environment
        self.signingKey = signingKey
        self.pushEndpoint = pushEndpoint ?? .push(environment)
        self.channelManagementEndpoint = channelManagementEndpoint ?? .channelManagement(environment)
        self.tokenRenewalAge = tokenRenewalAge
        self.retryPolicy = retryPolicy
        self.transport = transport
        self.metricsFactory = metricsFactory
    }
}
