import MarqueeStorage
import PostgresNIO

extension ServerConfiguration {
    /// The PostgreSQL pool of this replica, for the database at `target`.
    ///
    /// PostgresNIO arms timers each time a connection goes idle: an idle timeout for a connection
    /// above the minimum, a keep-alive for every one, both cancelled when it is leased again. A
    /// cancelled sleep keeps its memory until its deadline would have come, so at a fan-out's
    /// thousands of queries a second those timers held megabytes that grew with the run (issue 9:
    /// peak RSS at 1,000,000 tokens was 1.12 times that at 100,000; 1.02 without them). So the
    /// pool is opened whole and kept (no idle timeouts, and no connecting in the first burst), and
    /// keep-alive queries are off unless `database.keepAliveSeconds` asks for them: with them every
    /// 10 seconds, three full test runs in four showed sends repeated or writes missing on
    /// PostgreSQL under load, which runs without them did not (cause not found).
    public func postgresClientConfiguration(for target: PostgresConnectionURL) -> PostgresClient.Configuration {
        var configuration = target.configuration
        configuration.options.maximumConnections = databaseMaxConnections
        configuration.options.minimumConnections = databaseMaxConnections
        configuration.options.keepAliveBehavior = databaseKeepAliveSeconds > 0
            ? .init(frequency: .seconds(databaseKeepAliveSeconds))
            : nil
        return configuration
    }
}
