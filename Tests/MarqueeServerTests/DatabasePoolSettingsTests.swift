import MarqueeServer
import MarqueeStorage
import PostgresNIO
import Testing

/// `database.maxConnections` and `database.keepAliveSeconds`: the PostgreSQL pool a replica runs.
@Suite("Database pool settings")
struct DatabasePoolSettingsTests {
    static let url = "postgres://marquee:secret@127.0.0.1:5432/marquee"

    @Test("the pool is opened whole and kept, and idle connections are kept alive every database.keepAliveSeconds")
    func poolIsKeptWhole() throws {
        let configuration = try ServerConfiguration.reading(
            ["database.maxConnections": "6", "database.keepAliveSeconds": "2.5"],
            environment: false
        )
        let pool = configuration.postgresClientConfiguration(for: try PostgresConnectionURL(Self.url)).options
        #expect(pool.maximumConnections == 6)
        #expect(pool.minimumConnections == 6)
        #expect(pool.keepAliveBehavior?.frequency == .milliseconds(2_500))
    }

    @Test("keep-alive queries are off by default and with 0")
    func keepAliveOffAndDefault() throws {
        let off = try ServerConfiguration.reading(["database.keepAliveSeconds": "0"], environment: false)
        #expect(off.postgresClientConfiguration(for: try PostgresConnectionURL(Self.url)).options.keepAliveBehavior == nil)
        let standard = try ServerConfiguration.reading([:], environment: false)
        #expect(standard.postgresClientConfiguration(for: try PostgresConnectionURL(Self.url)).options.keepAliveBehavior == nil)
        #expect {
            try ServerConfiguration.reading(["database.keepAliveSeconds": "-1"], environment: false)
        } throws: { error in
            (error as? ConfigurationError)?.key == "database.keepAliveSeconds"
        }
    }
}
