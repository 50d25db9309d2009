import MarqueeTesting
import PostgresNIO
import Testing

@testable import MarqueeStorage

/// PostgreSQL only: what the sessions Marquee opens are set to.
@Suite("PostgreSQL sessions")
struct PostgresSessionTests {
    /// Forcing generic plans on a session reaches every statement with parameters, not only the
    /// named prepared ones: PostgresNIO sends each query as an unnamed one, and a query that filters
    /// on optional values (`$1 IS NULL OR ...`, the audience's pages) then keeps every branch it was
    /// not given. A 200,000-token start fan-out ran at a third of its rate so.
    @Test("the server's and the tests' sessions leave the choice of plan to PostgreSQL")
    func planChoiceIsPostgreSQLs() async throws {
        let cluster = try PostgresTestCluster.fromEnvironment()
        try await cluster.withDatabase(migrated: false) { name in
            let server = try PostgresConnectionURL(cluster.url(database: name)).configuration
            for configuration in [server, cluster.configuration(database: name)] {
                try await withRunningClient(configuration) { client in
                    let rows = try await client.query("SHOW plan_cache_mode").collect()
                    #expect(try rows.map { try $0.decode(String.self) } == ["auto"])
                }
            }
        }
    }
}
