import Foundation
import Logging
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import PostgresNIO
import Testing

/// The two stores the contract suite runs against. Every contract test takes one as its argument.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }
}

/// What a contract test gets: a migrated, empty store of its own and the clock it was built with.
struct StoreFixture: Sendable {
    let store: any MarqueeStore
    let clock: ManualWallClock
    let backend: Backend
    /// Another store over the same database, with other master keys (a replica after a rotation).
    let reopen: @Sendable (SecretSealer?) async throws -> any MarqueeStore

    var now: Date { clock.now }

    /// A fresh app (tenant) with both environments.
    func makeApp(_ name: String = "Scores") async throws -> App {
        let app = App(
            name: name,
            bundleID: "com.example.\(name.lowercased()).\(UUID().uuidString.prefix(8))",
            teamID: "TEAM123456",
            environments: [.sandbox, .production],
            createdAt: now
        )
        try await store.createApp(app)
        return app
    }

    func makeEvent(
        for app: App,
        key: String = "match-1",
        policy: MessageStoragePolicy = .noMessageStored
    ) async throws -> Event {
        let event = Event(
            appID: app.id,
            externalKey: key,
            title: "Final",
            attributesType: "MatchAttributes",
            environments: [.sandbox, .production],
            storagePolicy: policy,
            plannedStart: now.addingTimeInterval(3600),
            plannedEnd: now.addingTimeInterval(3 * 3600),
            createdAt: now
        )
        return try await store.createEvent(event).event
    }

    /// Reserves the channel row for the event in the environment, as `appID` (the event's app by default).
    func reserve(
        _ event: Event,
        _ environment: APNSEnvironment = .sandbox,
        as appID: AppID? = nil
    ) async throws -> ChannelReservation {
        try await store.reserveChannel(
            appID: appID ?? event.appID,
            eventID: event.id,
            environment: environment,
            storagePolicy: event.storagePolicy,
            requestID: UUID(),
            at: now
        )
    }

    /// An active channel for the event in the environment.
    /// An activity-update job of `app`, due now and leased to "worker" for two hours: what a
    /// commit of its batches holds.
    func leasedActivityUpdateJob(for app: App) async throws -> Job {
        let job = Job(appID: app.id, kind: .activityUpdate, arguments: [:], dueAt: now, createdAt: now)
        try await store.enqueueJob(job)
        _ = try await store.leaseJobs(owner: "worker", kinds: nil, now: now, leaseDuration: .seconds(7200), limit: 1)
        return job
    }

    func makeActiveChannel(for event: Event, environment: APNSEnvironment = .sandbox) async throws -> BroadcastChannel {
        let reservation = try await reserve(event, environment)
        return try await store.activateChannel(
            appID: event.appID,
            id: reservation.channel.id,
            apnsChannelID: "Y2hhbm5lbC1\(UUID().uuidString.prefix(8))",
            at: now
        )
    }
}

/// A master key made once per test process.
let testSealer = SecretSealer(current: try! MasterKey(id: "test-1", base64: MasterKey.generateBase64()))

/// Runs `body` with a migrated store of its own on `backend`, and tears it down afterwards.
func withStore(
    _ backend: Backend,
    sealer: SecretSealer? = testSealer,
    _ body: (StoreFixture) async throws -> Void
) async throws {
    let clock = ManualWallClock()
    switch backend {
    case .sqlite:
        try await withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("marquee.sqlite").path
            let opened = OpenedStores()
            let open: @Sendable (SecretSealer?) async throws -> SQLiteStore = { sealer in
                let store = try await SQLiteStore.open(
                    path: path,
                    configuration: StoreConfiguration(sealer: sealer, migrations: .sources, clock: clock)
                )
                await opened.add(store)
                return store
            }
            do {
                let store = try await open(sealer)
                try await store.migrate()
                try await body(
                    StoreFixture(store: store, clock: clock, backend: backend, reopen: { try await open($0) })
                )
                try await opened.closeAll()
            } catch {
                try? await opened.closeAll()
                throw error
            }
        }
    case .postgres:
        try await PostgresTestCluster.withDatabase { configuration in
            try await withRunningClient(configuration) { client in
                let open: @Sendable (SecretSealer?) -> PostgresStore = { sealer in
                    PostgresStore(
                        client: client,
                        configuration: StoreConfiguration(sealer: sealer, migrations: .sources, clock: clock)
                    )
                }
                try await body(StoreFixture(store: open(sealer), clock: clock, backend: backend, reopen: { open($0) }))
            }
        }
    }
}

/// SQLite stores a test opened, closed when it ends.
actor OpenedStores {
    private var stores: [SQLiteStore] = []

    func add(_ store: SQLiteStore) { stores.append(store) }

    func closeAll() async throws {
        for store in stores { try await store.close() }
        stores = []
    }
}

func withTemporaryDirectory<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("marquee-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await body(folder)
}

/// Runs a `PostgresClient` for the duration of `body`.
func withRunningClient<Result: Sendable>(
    _ configuration: PostgresClient.Configuration,
    _ body: (PostgresClient) async throws -> Result
) async throws -> Result {
    try await PostgresTestCluster.withRunningClient(configuration, body)
}

extension PostgresTestCluster {
    /// `body` with a client configuration for a copy of the migrated template (see
    /// `PostgresTestCluster`), or with `migrated: false` for an empty database.
    static func withDatabase(
        migrated: Bool = true,
        _ body: (PostgresClient.Configuration) async throws -> Void
    ) async throws {
        let cluster = try fromEnvironment()
        try await cluster.withDatabase(migrated: migrated) { name in
            try await body(cluster.configuration(database: name))
        }
    }
}
