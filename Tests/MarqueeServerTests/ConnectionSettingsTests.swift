import Testing

@testable import MarqueeServer

/// The connection limits and the authentication throttle, as the configuration sets them.
@Suite("Connection and throttle settings")
struct ConnectionSettingsTests {
    @Test("the defaults: 60 s idle, 10 s for headers, 60 s for a body, 1000 connections, 20 failures a minute")
    func defaults() throws {
        let configuration = try ServerConfiguration.reading([:], environment: false)
        #expect(configuration.connectionLimits == ConnectionLimits())
        #expect(configuration.connectionLimits.idleTimeout == .seconds(60))
        #expect(configuration.connectionLimits.headerTimeout == .seconds(10))
        #expect(configuration.connectionLimits.bodyTimeout == .seconds(60))
        #expect(configuration.connectionLimits.maximumConnections == 1_000)
        #expect(configuration.authenticationThrottle.limit == 20)
        #expect(configuration.authenticationThrottle.window == .seconds(60))
    }

    @Test("each key sets its limit, and a value out of range names its key")
    func keys() throws {
        let configuration = try ServerConfiguration.reading(
            [
                "http.idleTimeoutSeconds": "5", "http.headerTimeoutSeconds": "2", "http.bodyTimeoutSeconds": "7",
                "http.maxConnections": "64", "auth.throttle.failures": "0", "auth.throttle.windowSeconds": "300",
            ],
            environment: false
        )
        #expect(
            configuration.connectionLimits
                == ConnectionLimits(
                    idleTimeout: .seconds(5),
                    headerTimeout: .seconds(2),
                    bodyTimeout: .seconds(7),
                    maximumConnections: 64
                )
        )
        #expect(configuration.authenticationThrottle.limit == 0)
        #expect(configuration.authenticationThrottle.window == .seconds(300))
        for key in [
            "http.idleTimeoutSeconds", "http.headerTimeoutSeconds", "http.bodyTimeoutSeconds", "http.maxConnections",
            "auth.throttle.windowSeconds",
        ] {
            #expect {
                try ServerConfiguration.reading([key: "0"], environment: false)
            } throws: { error in
                (error as? ConfigurationError)?.key == key
            }
        }
    }
}
