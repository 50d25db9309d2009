import NIOCore
import Synchronization

/// The push endpoint's connections, spread over the event loops of the client's group: one
/// `APNSConnectionPool` per loop, each still lock-free on its own loop, and work handed to them in
/// turn.
///
/// Why: a pool lives on one loop by design, so with a single push pool one loop carries every
/// connection's HPACK and frame encoding, TLS and answers while the machine's other cores wait
/// (a 1,000,000-token fan-out profiled at 70 % of the server's samples on that loop). A fan-out
/// runs several parts at once, each a batch of its own, so taking the pools in turn spreads them.
final class APNSPushPools: Sendable {
    let pools: [APNSConnectionPool]
    private let nextPool = Atomic<Int>(0)

    init(
        eventLoopGroup: any EventLoopGroup,
        configuration: APNSClientConfiguration.Transport,
        makePool: (any EventLoop, APNSClientConfiguration.Transport) throws(APNSError) -> APNSConnectionPool
    ) throws(APNSError) {
        let loops = Array(eventLoopGroup.makeIterator())
        let shares = Self.shares(of: configuration, loops: loops.count)
        var pools: [APNSConnectionPool] = []
        for (loop, share) in zip(loops, shares) {
            pools.append(try makePool(loop, share))
        }
        self.pools = pools
    }

    /// The pool for the next batch or request, in turn.
    func next() -> APNSConnectionPool {
        guard pools.count > 1 else { return pools[0] }
        let turn = nextPool.wrappingAdd(1, ordering: .relaxed).oldValue
        return pools[Int(UInt(bitPattern: turn) % UInt(pools.count))]
    }

    /// How the connections and the outstanding-request bound divide over `loops` pools: one pool per
    /// loop up to one per connection, the connections as even as they go, and the bound split so
    /// that the client as a whole keeps what the configuration says (each pool at least 1).
    static func shares(
        of transport: APNSClientConfiguration.Transport,
        loops: Int
    ) -> [APNSClientConfiguration.Transport] {
        let count = max(1, min(loops, transport.connectionsPerEndpoint))
        return (0..<count).map { index in
            var share = transport
            share.connectionsPerEndpoint = Self.part(of: transport.connectionsPerEndpoint, index: index, count: count)
            share.maximumOutstandingRequests = Self.part(
                of: transport.maximumOutstandingRequests,
                index: index,
                count: count
            )
            return share
        }
    }

    /// The `index`th of `count` near-equal parts of `total`, at least 1.
    private static func part(of total: Int, index: Int, count: Int) -> Int {
        max(1, total / count + (index < total % count ? 1 : 0))
    }

    /// Closes every pool's connections, all at once.
    func shutdown() async {
        await withTaskGroup(of: Void.self) { group in
            for pool in pools {
                group.addTask { try? await pool.shutdown().get() }
            }
        }
    }

    /// The stream limit of every ready connection, pool by pool.
    func connectionStreamLimits() async -> [Int] {
        var limits: [Int] = []
        for pool in pools {
            limits += (try? await pool.eventLoop.submit { pool.connectionStreamLimits }.get()) ?? []
        }
        return limits
    }
}
