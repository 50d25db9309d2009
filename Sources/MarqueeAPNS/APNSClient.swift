import Foundation
import Logging
import MarqueeCore
import NIOCore
import NIOPosix

/// The APNs provider client for one signing key in one environment: Live Activity device pushes,
/// broadcasts and channel management over pooled, long-lived HTTP/2 connections.
///
/// The surface is async/await; the hot path runs on event loops (see `APNSConnectionPool`). Retries
/// (`retryLater` with back-off, one token renewal on `ExpiredProviderToken`, requests APNs provably
/// did not process: never written, above a GOAWAY's last-stream-id, `REFUSED_STREAM`) happen
/// inside; what reaches the caller is final. A request written and never answered is
/// `APNSError.uncertain`: APNs may have delivered it, so a start or a channel creation is never
/// sent again by the client (updates, ends, broadcasts and channel reads, lists and deletes are,
/// within the retry policy). Call `shutdown()` when done.
public final class APNSClient: Sendable {
    public let configuration: APNSClientConfiguration
    let tokenCache: APNSProviderTokenCache
    let pushPools: APNSPushPools
    let managementPool: APNSConnectionPool
    let metrics: APNSClientMetrics
    private let clock: any WallClock

    /// - Parameters:
    ///   - eventLoopGroup: where the connections live: the push connections spread over its loops
    ///     (`APNSPushPools`), channel management on one; each pool stays on its loop.
    ///   - clock: drives provider-token age and broadcast expirations.
    ///   - logger: debug/trace only; never sees keys or tokens.
    public init(
        configuration: APNSClientConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        clock: any WallClock = SystemWallClock(),
        logger: Logger = Logger(label: "marquee.apns", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(APNSError) {
        self.configuration = configuration
        self.clock = clock
        var logger = logger
        logger[metadataKey: "apns.environment"] = "\(configuration.environment)"
        logger[metadataKey: "apns.key_id"] = "\(configuration.signingKey.keyID)"
        let metrics = APNSClientMetrics(factory: configuration.metricsFactory, environment: configuration.environment)
        self.metrics = metrics
        let tokenCache = APNSProviderTokenCache(
            signingKey: configuration.signingKey,
            clock: clock,
            renewalAge: configuration.tokenRenewalAge
        )
        self.tokenCache = tokenCache
        let dependencies = APNSPoolDependencies(
            retryPolicy: configuration.retryPolicy,
            tokenCache: tokenCache,
            clock: clock,
            metrics: metrics,
            logger: logger
        )
        pushPools = try APNSPushPools(
            eventLoopGroup: eventLoopGroup,
            configuration: configuration.transport
        ) { (eventLoop, share) throws(APNSError) in
            try APNSConnectionPool(
                eventLoop: eventLoop,
                endpoint: configuration.pushEndpoint,
                configuration: share,
                dependencies: dependencies
            )
        }
        managementPool = try APNSConnectionPool(
            eventLoop: eventLoopGroup.next(),
            endpoint: configuration.channelManagementEndpoint,
            configuration: configuration.transport,
            dependencies: dependencies
        )
    }

    // MARK: Device pushes

    /// Sends one push and waits for APNs' answer.
    public func send(_ push: APNSDevicePush) async throws(APNSError) -> APNSDeviceResult {
        let response = try await perform(.device(push), on: pushPools.next())
        return APNSDeviceResult(
            apnsID: response.apnsID ?? push.apnsID?.lowercasedText ?? "",
            uniqueID: response.uniqueID
        )
    }

    /// Sends many pushes (a fan-out) with a bounded window, pulling from `pushes` only as fast as
    /// APNs answers, and returns their outcomes in chunks. Nothing is sent per push but the frames:
    /// no task, no continuation.
    ///
    /// - Parameter window: pushes of this batch outstanding at once; the transport's `batchWindow`
    ///   by default.
    public func send<Pushes: Sequence & Sendable>(
        _ pushes: Pushes,
        window: Int? = nil
    ) -> APNSPushOutcomes where Pushes.Element == APNSDevicePush {
        let batch = APNSPushBatch(
            input: APNSSequenceInput(pushes),
            window: max(1, window ?? configuration.transport.batchWindow),
            metrics: metrics
        )
        return APNSPushOutcomes(producer: start(batch, on: pushPools.next()))
    }

    /// Sends an audience that arrives in pages (rows read from a database page by page) with a
    /// bounded window, and returns the outcomes in chunks.
    ///
    /// One task pulls the pages; pushes go out as with `send(_:window:)`, with no task or continuation
    /// per push. At most `APNSPageInput.maximumPagesAhead` (2) pages wait ahead of the one being sent,
    /// so memory does not grow with the audience. A slow outcome consumer slows the sending and then
    /// the page source; abandoning the outcome iteration cancels the page task and stops the pulling.
    ///
    /// Every push the source gives gets exactly one outcome; `APNSPushOutcome.index` counts pushes
    /// across pages from 0. If the source throws, the outcomes of what it gave come first and then the
    /// sequence throws `APNSPushSourceError` wrapping the source's error.
    ///
    /// - Parameter window: pushes of this batch outstanding at once; the transport's `batchWindow`
    ///   by default.
    public func send<Pages: AsyncSequence & Sendable>(
        pages: Pages,
        window: Int? = nil
    ) -> APNSPagedPushOutcomes<Pages.Failure> where Pages.Element == [APNSDevicePush] {
        let pool = pushPools.next()
        let batch = APNSPushBatch(
            input: APNSPageInput(),
            window: max(1, window ?? configuration.transport.batchWindow),
            metrics: metrics
        )
        let failure = APNSPushSourceFailureSlot<Pages.Failure>()
        let producer = start(batch, on: pool)
        // Started after `start` queued the batch on the loop: the pump's first hop comes after it.
        let pump = Task { await APNSPagePump.run(pages, into: batch, pool: pool, failure: failure) }
        pool.eventLoop.execute { batch.adopt(pump: pump) }
        return APNSPagedPushOutcomes(producer: producer, failure: failure)
    }

    /// Wires a batch's outcomes to a back-pressured sequence and hands the batch to a push pool.
    private func start<Input>(_ batch: APNSPushBatch<Input>, on pool: APNSConnectionPool) -> APNSPushOutcomes.Producer {
        let delegate = APNSPushBatchDelegate(
            eventLoop: pool.eventLoop,
            onProduceMore: { batch.resume(pool: pool) },
            onTerminate: { batch.cancel() }
        )
        let chunks = configuration.transport.batchBufferedChunks
        let made = APNSPushOutcomes.Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: max(1, chunks / 2), highWatermark: chunks),
            finishOnDeinit: false,
            delegate: delegate
        )
        let source = made.source
        pool.eventLoop.execute {
            batch.attach(source)
            pool.addSource(batch)
        }
        return made.sequence
    }

    // MARK: Broadcasts

    /// Publishes on a channel.
    public func broadcast(_ broadcast: APNSBroadcast) async throws(APNSError) -> APNSBroadcastResult {
        let response = try await perform(.broadcast(broadcast), on: pushPools.next())
        guard let requestID = response.requestID ?? broadcast.requestID?.lowercasedText else {
            throw .invalidResponse("the broadcast answer has no apns-request-id")
        }
        return APNSBroadcastResult(requestID: requestID, uniqueID: response.uniqueID)
    }

    // MARK: Channel management

    /// Creates a channel (201, its ID in `apns-channel-id`).
    public func createChannel(
        bundleID: String,
        storagePolicy: MessageStoragePolicy,
        requestID: UUID = UUID.random()
    ) async throws(APNSError) -> APNSChannelCreated {
        let body: JSONObject = [
            "message-storage-policy": .integer(Int64(storagePolicy.rawValue)),
            "push-type": .string(APNSPushType.channelBodyLiveActivity),
        ]
        let response = try await manageChannels(
            .post,
            path: Self.channelsPath(bundleID),
            requestID: requestID,
            body: ByteBuffer(bytes: body.jsonBytes)
        )
        guard response.status == 201, let channelID = response.channelID, !channelID.isEmpty else {
            throw .invalidResponse("channel creation answered \(response.status) without an apns-channel-id")
        }
        return APNSChannelCreated(channelID: channelID, requestID: response.requestID)
    }

    /// Reads a channel's configuration.
    public func readChannel(
        bundleID: String,
        channelID: String,
        requestID: UUID = UUID.random()
    ) async throws(APNSError) -> APNSChannelConfiguration {
        let response = try await manageChannels(
            .get,
            path: Self.channelsPath(bundleID),
            channelID: channelID,
            requestID: requestID
        )
        struct Body: Decodable {
            var storagePolicy: Int
            var pushType: String
            enum CodingKeys: String, CodingKey {
                case storagePolicy = "message-storage-policy"
                case pushType = "push-type"
            }
        }
        let body = try Self.decode(Body.self, from: response)
        guard let policy = MessageStoragePolicy(rawValue: body.storagePolicy) else {
            throw .invalidResponse("unknown message-storage-policy \(body.storagePolicy)")
        }
        return APNSChannelConfiguration(storagePolicy: policy, pushType: body.pushType, requestID: response.requestID)
    }

    /// Lists the IDs of every channel of the app in this environment.
    public func listChannels(bundleID: String, requestID: UUID = UUID.random()) async throws(APNSError) -> [String] {
        let response = try await manageChannels(.get, path: "/1/apps/\(bundleID)/all-channels", requestID: requestID)
        struct Body: Decodable { var channels: [String] }
        return try Self.decode(Body.self, from: response).channels
    }

    /// Deletes a channel (204). Irreversible; stored messages may still be delivered.
    ///
    /// Idempotent: a channel APNs does not know counts as deleted, so that deleting twice, or
    /// deleting again while reconciling after a crash, succeeds. Apple's servers answer such a
    /// `DELETE` with 404 `BadPath` (`apns-reference.md` §6a), Apple's documentation implies 400
    /// `ChannelNotRegistered`; both are accepted. A `BadPath` cannot be told from a wrong path here,
    /// but this client builds the path itself and `/1/apps/<bundleID>/channels` is the documented
    /// one, so on this request it can only mean the channel.
    @discardableResult
    public func deleteChannel(
        bundleID: String,
        channelID: String,
        requestID: UUID = UUID.random()
    ) async throws(APNSError) -> APNSChannelDeletion {
        do throws(APNSError) {
            let response = try await manageChannels(
                .delete,
                path: Self.channelsPath(bundleID),
                channelID: channelID,
                requestID: requestID
            )
            return .deleted(requestID: response.requestID)
        } catch {
            guard case .rejected(let rejection) = error, Self.meansChannelAlreadyGone(rejection) else { throw error }
            return .alreadyGone(rejection)
        }
    }

    /// Whether APNs' refusal of a channel `DELETE` says the channel does not exist. `BadChannelId` is
    /// not among them: on a `DELETE` it says the ID is malformed, and an ID this client mangled may
    /// still name a live channel that nobody would then delete; it stays an error (`channelGone`).
    static func meansChannelAlreadyGone(_ rejection: APNSRejection) -> Bool {
        switch rejection.reason {
        case .badPath: rejection.status == 404
        case .channelNotRegistered: true
        default: false
        }
    }

    // MARK: Lifecycle and inspection

    /// Fails what is queued, closes every connection and waits until they are closed.
    public func shutdown() async {
        await pushPools.shutdown()
        try? await managementPool.shutdown().get()
    }

    /// The stream limit each ready push connection works with now: 1 until APNs accepted the token,
    /// then the server's SETTINGS_MAX_CONCURRENT_STREAMS (capped by the configuration).
    public func pushConnectionStreamLimits() async -> [Int] {
        await pushPools.connectionStreamLimits()
    }

    // MARK: Plumbing

    private func perform(
        _ operation: APNSOperation,
        on pool: APNSConnectionPool
    ) async throws(APNSError) -> APNSResponse {
        let promise = pool.eventLoop.makePromise(of: APNSResponse.self)
        let sink = APNSSingleRequestSink(promise: promise)
        pool.eventLoop.execute {
            pool.submit(APNSQueuedRequest(operation: operation, sink: sink, tag: 0))
        }
        do {
            return try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                pool.eventLoop.execute { sink.cancel() }
            }
        } catch let error as APNSError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    private func manageChannels(
        _ method: APNSChannelRequest.Method,
        path: String,
        channelID: String? = nil,
        requestID: UUID,
        body: ByteBuffer? = nil
    ) async throws(APNSError) -> APNSResponse {
        try APNSHeaderValue.validate(path, name: "the bundle ID")
        if let channelID { try APNSHeaderValue.validate(channelID, name: "apns-channel-id") }
        return try await perform(
            .manageChannels(
                APNSChannelRequest(method: method, path: path, channelID: channelID, requestID: requestID, body: body)
            ),
            on: managementPool
        )
    }

    private static func channelsPath(_ bundleID: String) -> String {
        "/1/apps/\(bundleID)/channels"
    }

    private static func decode<Body: Decodable>(
        _ type: Body.Type,
        from response: APNSResponse
    ) throws(APNSError) -> Body {
        guard let body = response.body else { throw .invalidResponse("the answer has no body") }
        do {
            return try JSONDecoder().decode(Body.self, from: Data(body.readableBytesView))
        } catch {
            throw .invalidResponse("the answer's body is not the documented JSON")
        }
    }
}
