import MarqueeServer
import MarqueeStorage
import PostgresNIO
import Testing

/// `database.maxConnections`, `database.idleTimeoutSeconds`, `database.callTimeoutSeconds` and
/// `database.keepAliveSeconds`: the PostgreSQL pool a replica runs, and how long its calls may take.
@Suite("Database pool settings")
struct DatabasePoolSettingsTests {
    static let url = "postgres://marquee:secret@127.0.0.1:5432/marquee"

    @Test(
        """
        the pool opens connections as calls need them, up to database.maxConnections, keeps none open on purpose, \
        closes those idle for database.idleTimeoutSeconds, and keeps idle ones alive every database.keepAliveSeconds
        """
    )
    func poolOpensOnDemand() throws {
        let configuration = try ServerConfiguration.reading(
            ["database.maxConnections": "6", "database.idleTimeoutSeconds": "4", "database.keepAliveSeconds": "2.5"],
            environment: false
        )
        let pool = configuration.postgresClientConfiguration(for: try PostgresConnectionURL(Self.url)).options
        #expect(pool.maximumConnections == 6)
        // A minimum trips PostgresNIO 1.33's pool when PostgreSQL restarts (PostgresRestartTests).
        #expect(pool.minimumConnections == 0)
        #expect(pool.connectionIdleTimeout == .seconds(4))
        #expect(pool.keepAliveBehavior?.frequency == .milliseconds(2_500))
    }

    @Test("idle connections close after 10 s, and a store call waits 30 s for PostgreSQL, by default; neither may be 0")
    func idleAndCallTimeouts() throws {
        let standard = try ServerConfiguration.reading([:], environment: false)
        #expect(
            standard.postgresClientConfiguration(for: try PostgresConnectionURL(Self.url)).options.connectionIdleTimeout
                == .seconds(10)
        )
        #expect(standard.databaseCallTimeoutSeconds == 30)
        for key in ["database.idleTimeoutSeconds", "database.callTimeoutSeconds"] {
            #expect {
                try ServerConfiguration.reading([key: "0"], environment: false)
            } throws: { error in
                (error as? ConfigurationError)?.key == key
            }
        }
    }

    @Test("keep-alive queries are off by default and with 0")
    func keepAliveOffAndDefault() throws {
        let off = try ServerConfiguration.reading(["database.keepAliveSeconds": "0"], environment: false)
        #expect(
            off.postgresClientConfiguration(for: try PostgresConnectionURL(Self.url)).options.keepAliveBehavior == nil
        )
        let standard = try ServerConfiguration.reading([:], environment: false)
        #expect(
            standard.postgresClientConfiguration(for: try PostgresConnectionURL(Self.url)).options.keepAliveBehavior
                == nil
        )
        #expect {
            try ServerConfiguration.reading(["database.keepAliveSeconds": "-1"], environment: false)
        } throws: { error in
            (error as? ConfigurationError)?.key == "database.keepAliveSeconds"
        }
    }
}
