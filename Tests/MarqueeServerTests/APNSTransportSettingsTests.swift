import MarqueeAPNS
import MarqueeServer
import Testing

/// `apns.connections`, `apns.streamsPerConnection`, `apns.adaptiveConcurrency`,
/// `apns.concurrencyFloor` and `apns.minimumWriteBatch`: the transport every APNs client gets,
/// whatever the target (the in-process emulator, Apple, or custom endpoints).
@Suite("APNs transport settings")
struct APNSTransportSettingsTests {
    @Test(
        """
        the APNs connections and their streams are set by apns.connections and apns.streamsPerConnection, within \
        bounds
        """
    )
    func transportSettings() throws {
        let configuration = try ServerConfiguration.reading(
            ["apns.connections": "3", "apns.streamsPerConnection": "50"],
            environment: false
        )
        #expect(configuration.apnsTransport.connectionsPerEndpoint == 3)
        #expect(configuration.apnsTransport.maximumStreamsPerConnection == 50)
        #expect(
            try ServerConfiguration.reading([:], environment: false).apnsTransport.maximumStreamsPerConnection == 1_000
        )
        #expect {
            try ServerConfiguration.reading(["apns.streamsPerConnection": "0"], environment: false)
        } throws: { error in
            (error as? ConfigurationError)?.key == "apns.streamsPerConnection"
        }
    }

    @Test(
        """
        connections size their concurrency from latency by default, above apns.concurrencyFloor; \
        apns.adaptiveConcurrency=false fills the budget
        """
    )
    func adaptiveConcurrencySettings() throws {
        let defaults = try ServerConfiguration.reading([:], environment: false).apnsTransport
        #expect(defaults.adaptiveConcurrency)
        #expect(defaults.concurrencyFloor == 20)
        let fixed = try ServerConfiguration.reading(
            ["apns.adaptiveConcurrency": "false", "apns.concurrencyFloor": "64"],
            environment: false
        ).apnsTransport
        #expect(!fixed.adaptiveConcurrency)
        #expect(fixed.concurrencyFloor == 64)
        #expect {
            try ServerConfiguration.reading(["apns.concurrencyFloor": "0"], environment: false)
        } throws: { error in
            (error as? ConfigurationError)?.key == "apns.concurrencyFloor"
        }
    }

    @Test("requests leave a busy connection in batches of apns.minimumWriteBatch, 8 unless set, 1 at least")
    func minimumWriteBatchSetting() throws {
        #expect(try ServerConfiguration.reading([:], environment: false).apnsTransport.minimumWriteBatch == 8)
        let atOnce = try ServerConfiguration.reading(["apns.minimumWriteBatch": "1"], environment: false)
        #expect(atOnce.apnsTransport.minimumWriteBatch == 1)
        #expect {
            try ServerConfiguration.reading(["apns.minimumWriteBatch": "0"], environment: false)
        } throws: { error in
            (error as? ConfigurationError)?.key == "apns.minimumWriteBatch"
        }
    }
}
