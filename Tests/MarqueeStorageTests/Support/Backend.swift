import Foundation
import Logging
import MarqueeCore
import MarqueeStorage
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

    func makeEvent(for app: App, key: String = "match-1", policy: MessageStoragePolicy = .noMessageStored) async throws -> Event {
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
    func reserve(_ event: Event, _ environment: APNSEnvironment = .sandbox, as appID: AppID? = nil) async throws -> ChannelReservation {
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
                try await body(StoreFixture(store: store, clock: clock, backend: backend, reopen: { try await open($0) }))
                try await opened.closeAll()
            } catch {
                try? await opened.closeAll()
                throw error
            }
        }
    case .postgres:
        try await PostgresTestDatabases.shared.withDatabase { configuration in
            try await withRunningClient(configuration) { client in
                let open: @Sendable (SecretSealer?) -> PostgresStore = { sealer in
                    PostgresStore(client: client, configuration: StoreConfiguration(sealer: sealer, migrations: .sources, clock: clock))
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
    let client = PostgresClient(configuration: configuration)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

/// Test databases on the throwaway PostgreSQL that `scripts/test` starts: migrated once into a
/// template, then one `CREATE DATABASE ... TEMPLATE` per test (a file copy, milliseconds).
actor PostgresTestDatabases {
    static let shared = PostgresTestDatabases()

    private var template: Task<String, any Error>?

    struct MissingEnvironment: Error, CustomStringConvertible {
        var description: String {
            "POSTGRES_HOST/PORT/USER/PASSWORD/DATABASE are not set: run the suite with scripts/test, which starts a throwaway PostgreSQL"
        }
    }

    static func configuration(database: String? = nil) throws -> PostgresClient.Configuration {
        let environment = ProcessInfo.processInfo.environment
        guard let host = environment["POSTGRES_HOST"], let port = environment["POSTGRES_PORT"].flatMap(Int.init),
            let user = environment["POSTGRES_USER"], let password = environment["POSTGRES_PASSWORD"],
            let adminDatabase = environment["POSTGRES_DATABASE"]
        else { throw MissingEnvironment() }
        var configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: user,
            password: password,
            database: database ?? adminDatabase,
            tls: .disable
        )
        // Enough for the concurrency tests to contend on several connections, few enough for
        // every test running at once to stay under the cluster's max_connections.
        configuration.options.maximumConnections = 4
        return configuration
    }

    /// A copy of the migrated template.
    nonisolated func withDatabase(_ body: (PostgresClient.Configuration) async throws -> Void) async throws {
        try await withNewDatabase(template: try await templateDatabase(), body)
    }

    /// A database with nothing in it, for the migration tests.
    nonisolated func withEmptyDatabase(_ body: (PostgresClient.Configuration) async throws -> Void) async throws {
        try await withNewDatabase(template: nil, body)
    }

    private nonisolated func withNewDatabase(
        template: String?,
        _ body: (PostgresClient.Configuration) async throws -> Void
    ) async throws {
        let admin = try Self.configuration()
        let name = Self.uniqueName("marquee_t")
        let create = "CREATE DATABASE \(name)" + (template.map { " TEMPLATE \($0)" } ?? "")
        try await withRunningClient(admin) { client in
            // The template's last connection may still be closing: PostgreSQL then answers 55006.
            for attempt in 1...50 {
                do {
                    try await client.query(PostgresQuery(unsafeSQL: create))
                    return
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55006" && attempt < 50 {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        do {
            try await body(try Self.configuration(database: name))
        } catch {
            await Self.drop(name, admin: admin)
            throw error
        }
        await Self.drop(name, admin: admin)
    }

    private static func uniqueName(_ prefix: String) -> String {
        "\(prefix)_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
    }

    private static func drop(_ name: String, admin: PostgresClient.Configuration) async {
        _ = try? await withRunningClient(admin) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
    }

    /// Creates and migrates the template once per test process.
    private func templateDatabase() async throws -> String {
        if let template { return try await template.value }
        let task = Task<String, any Error> {
            let admin = try Self.configuration()
            let name = Self.uniqueName("marquee_template")
            _ = try await withRunningClient(admin) { client in
                try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
            }
            try await withRunningClient(try Self.configuration(database: name)) { client in
                try await PostgresStore(client: client, configuration: StoreConfiguration(sealer: nil, migrations: .sources))
                    .migrate()
            }
            return name
        }
        template = task
        return try await task.value
    }
}
