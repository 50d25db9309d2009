import ServiceLifecycle

extension APNSEmulator: Service {
    /// Serves until its service group shuts down gracefully (or the task is cancelled), then closes
    /// every listener and connection. Starts the emulator first unless it runs already: `marquee
    /// serve` starts its in-process emulator before the group, to configure its APNs clients with
    /// the emulator's ports, and `marquee emulator` to print them.
    public func run() async throws {
        try await startUnlessStarted()
        try? await gracefulShutdown()
        await shutdown()
    }
}
