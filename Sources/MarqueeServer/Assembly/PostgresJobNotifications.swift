import Logging
import MarqueeEngine
import MarqueeStorage
import PostgresNIO
import ServiceLifecycle

/// A service that needs the assembled engine.
protocol EngineService: Sendable {
    func service(for engine: MarqueeEngine) -> any Service
}

/// Wakes the job worker when any replica enqueues a job: LISTEN on the store's jobs channel. The
/// worker still polls, so a lost connection delays jobs by a poll interval at most.
struct PostgresJobNotifications: EngineService {
    let client: PostgresClient
    let wakeup: @Sendable (MarqueeEngine) -> Void
    let logger: Logger

    func service(for engine: MarqueeEngine) -> any Service {
        Listener(client: client, signal: { wakeup(engine) }, logger: logger)
    }

    struct Listener: Service {
        let client: PostgresClient
        let signal: @Sendable () -> Void
        let logger: Logger

        func run() async throws {
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                do {
                    try await cancelWhenGracefulShutdown {
                        try await client.withConnection { connection in
                            try await connection.listen(on: PostgresStore.jobsChannel) { notifications in
                                for try await _ in notifications { signal() }
                            }
                        }
                    }
                } catch {
                    if Task.isCancelled || Task.isShuttingDownGracefully { return }
                    logger.debug("LISTEN for jobs ended; listening again", metadata: ["error": "\(String(reflecting: error))"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }
}
