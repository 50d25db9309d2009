import Crypto
import MarqueeCore
import NIOCore
import NIOPosix
import Testing

@testable import MarqueeAPNS

@Suite("Spreading the push connections over the event loops")
struct APNSPushPoolsTests {
    typealias Transport = APNSClientConfiguration.Transport

    @Test("one pool per loop, up to one per connection, the connections as even as they go")
    func connectionsSpreadOverLoops() {
        let two = Transport(connectionsPerEndpoint: 2)
        #expect(APNSPushPools.shares(of: two, loops: 2).map(\.connectionsPerEndpoint) == [1, 1])
        #expect(APNSPushPools.shares(of: two, loops: 8).map(\.connectionsPerEndpoint) == [1, 1])
        #expect(APNSPushPools.shares(of: two, loops: 1).map(\.connectionsPerEndpoint) == [2])
        let five = Transport(connectionsPerEndpoint: 5)
        #expect(APNSPushPools.shares(of: five, loops: 2).map(\.connectionsPerEndpoint) == [3, 2])
        #expect(
            APNSPushPools.shares(of: Transport(connectionsPerEndpoint: 1), loops: 4).map(\.connectionsPerEndpoint) == [
                1
            ]
        )
    }

    @Test("the client as a whole keeps the configured bound on outstanding requests, each pool at least one")
    func outstandingBoundIsSplit() {
        let shares = APNSPushPools.shares(
            of: Transport(connectionsPerEndpoint: 3, maximumOutstandingRequests: 10_000),
            loops: 3
        )
        #expect(shares.map(\.maximumOutstandingRequests) == [3_334, 3_333, 3_333])
        let tiny = APNSPushPools.shares(
            of: Transport(connectionsPerEndpoint: 2, maximumOutstandingRequests: 1),
            loops: 2
        )
        #expect(tiny.map(\.maximumOutstandingRequests) == [1, 1])
    }

    @Test("every other setting is each pool's as configured")
    func otherSettingsUnchanged() {
        let transport = Transport(connectionsPerEndpoint: 4, maximumStreamsPerConnection: 50, batchWindow: 123)
        for share in APNSPushPools.shares(of: transport, loops: 2) {
            #expect(share.maximumStreamsPerConnection == 50)
            #expect(share.batchWindow == 123)
            #expect(share.drainTimeout == transport.drainTimeout)
        }
    }

    @Test("work goes to the pools in turn, each pool on a loop of its own")
    func poolsTakenInTurn() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let endpoint = APNSEndpoint(host: "127.0.0.1", port: 1, security: .cleartext)
        let configuration = APNSClientConfiguration(
            environment: .sandbox,
            signingKey: APNSSigningKey(privateKey: .init(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ"),
            pushEndpoint: endpoint,
            channelManagementEndpoint: endpoint
        )
        let client = try APNSClient(configuration: configuration, eventLoopGroup: group)
        let pools = client.pushPools
        #expect(pools.pools.count == 2)
        #expect(pools.pools[0].eventLoop !== pools.pools[1].eventLoop)
        let taken = (0..<4).map { _ in ObjectIdentifier(pools.next()) }
        #expect(taken[0] != taken[1])
        #expect(taken[0] == taken[2])
        #expect(taken[1] == taken[3])
        await client.shutdown()
        try await group.shutdownGracefully()
    }
}
