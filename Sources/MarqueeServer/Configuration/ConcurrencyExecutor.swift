import NIOCore
import NIOPosix

/// Which threads run the `marquee` process's Swift tasks: SwiftNIO's event loops (the default) or
/// Swift's own global pool.
///
/// On the event loops, a request's task and what it awaits (its store calls, its APNs request)
/// continue on the threads that do their I/O; on Swift's pool each await is a hop between the pool
/// and an event loop and back, a thread to wake each way. With every core busy a woken thread waits
/// its turn, and the hops made most of a broadcast's tail with another process beside it
/// (BENCHMARKS.md, "Broadcast latency").
///
/// The choice has to be made before the process's first task is enqueued, so it is read from the
/// environment alone, by `main`, not with the rest of the configuration. `swift-pool` is the way
/// back should a library block its caller's thread, which on an event loop would hold that loop's
/// connections too.
public enum ConcurrencyExecutor: String, Sendable, CaseIterable {
    case eventLoops = "event-loops"
    case swiftPool = "swift-pool"

    public static let key = "runtime.concurrencyExecutor"

    /// The choice `environment` makes (`MARQUEE_RUNTIME_CONCURRENCY_EXECUTOR`), the event loops when it
    /// makes none.
    public static func chosen(in environment: [String: String]) throws(ConfigurationError) -> Self {
        guard let value = environment[ConfigurationSources.environmentName(key)] else { return .eventLoops }
        guard let executor = Self(rawValue: value) else {
            let choices = allCases.map(\.rawValue).joined(separator: " or ")
            throw ConfigurationError(key: key, "\"\(value)\" is not an executor: \(choices)")
        }
        return executor
    }

    /// Makes this Swift concurrency's global executor. Call once, from `main`, before any task.
    /// Whether it is: SwiftNIO declines the event loops when it cannot take over (another global
    /// executor installed first, or a platform without the hook), and the tasks stay on Swift's pool.
    public func install() -> Bool {
        switch self {
        case .eventLoops:
            NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        case .swiftPool:
            true
        }
    }
}
