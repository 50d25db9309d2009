import MarqueeStorage
import PostgresNIO

extension ServerConfiguration {
    /// The PostgreSQL pool of this replica, for the database at `target`: connections opened as
    /// they are needed, up to `database.maxConnections`, and closed after `database.idleTimeoutSeconds`.
    ///
    /// No minimum of connections kept open: PostgresNIO 1.33's pool trips a precondition (the
    /// process stops) when PostgreSQL restarts under load while it keeps a minimum, because the
    /// connection attempts it drops while PostgreSQL is down leave it below its minimum
    /// (`PostgresRestartTests`; at 50,000 devices both replicas of a chaos run stopped that way).
    ///
    /// The idle timeout is short for memory's sake: PostgresNIO arms it each time a connection goes
    /// idle and cancels it when the connection is leased again, and a cancelled sleep keeps its memory
    /// until its deadline would have come. At a fan-out's thousands of queries a second, a 60-second
    /// timeout held megabytes that grew with the run (issue 9 measured 1.12 times the peak RSS at
    /// 1,000,000 tokens as at 100,000 with such timers). Keep-alive queries arm a timer the same way,
    /// so they are off unless `database.keepAliveSeconds` asks for them: with them every 10 seconds,
    /// three full test runs in four showed sends repeated or writes missing on PostgreSQL under load,
    /// which runs without them did not (cause not found).
    public func postgresClientConfiguration(for target: PostgresConnectionURL) -> PostgresClient.Configuration {
        var configuration = target.configuration
        configuration.options.maximumConnections = databaseMaxConnections
        configuration.options.minimumConnections = 0
        configuration.options.connectionIdleTimeout = .seconds(databaseIdleTimeoutSeconds)
        configuration.options.keepAliveBehavior =
            databaseKeepAliveSeconds > 0
            ? .init(frequency: .seconds(databaseKeepAliveSeconds))
            : nil
        return configuration
    }
}
