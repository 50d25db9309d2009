import ServiceLifecycle

/// Marquee's own services (the API, the job worker, the APNs clients), run as one service of an
/// outer group beside the PostgreSQL client they use: listed after the client, so that a graceful
/// shutdown stops them first (the worker commits the sends it had in flight) and the client last.
/// Opening the store (waiting for PostgreSQL, migrating) happens inside `run`, once the client runs.
struct StoreBoundService: Service {
    let body: @Sendable () async throws -> Void

    func run() async throws {
        try await body()
    }
}
