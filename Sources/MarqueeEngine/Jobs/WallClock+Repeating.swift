import Logging
import MarqueeCore
import ServiceLifecycle

extension WallClock {
    /// Runs `pass` now and then every `interval` after the last one ended, until the task is
    /// cancelled or its service group shuts down gracefully: the loop of a replica's periodic
    /// services (`ChannelJanitor`, `FunnelReporter`). A pass that fails is logged as `failure`
    /// with its error, and the next one runs on time.
    func repeating(
        every interval: Duration,
        logger: Logger,
        failure: Logger.Message,
        _ pass: () async throws -> Void
    ) async {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await pass()
            } catch is CancellationError {
                return
            } catch {
                logger.warning(failure, metadata: ["error": "\(String(reflecting: error))"])
            }
            do {
                try await cancelWhenGracefulShutdown { try await self.sleep(for: interval) }
            } catch {
                return
            }
        }
    }
}
