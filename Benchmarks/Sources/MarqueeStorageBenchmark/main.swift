// Storage benchmarks: bulk upsert of push-to-start tokens and streaming an audience by keyset
// pagination. Prints one result line per measurement. Run through Benchmarks/run-storage.sh.
//
//   MarqueeStorageBenchmark upsert [--backend postgres|sqlite] [--tokens N] [--batch N]
//   MarqueeStorageBenchmark stream [--backend postgres|sqlite] [--tokens N] [--page N]
import Foundation
import MarqueeCore
import MarqueeStorage
import PostgresNIO

struct Options {
    var mode = "upsert"
    var backend = "postgres"
    var tokens = 200_000
    var batch = 10_000
    var page = 1_000

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        if let mode = iterator.next() { self.mode = mode }
        while let flag = iterator.next() {
            guard let value = iterator.next() else { throw BenchmarkError("missing value for \(flag)") }
            switch flag {
            case "--backend": backend = value
            case "--tokens": tokens = Int(value) ?? tokens
            case "--batch": batch = Int(value) ?? batch
            case "--page": page = Int(value) ?? page
            default: throw BenchmarkError("unknown option \(flag)")
            }
        }
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Resident memory from /proc/self/status, in KiB.
enum Memory {
    static func status(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? -1
        }
        return -1
    }

    static var residentKiB: Int { status("VmRSS") }
    static var peakKiB: Int { status("VmHWM") }

    /// Resets VmHWM to the current RSS (Linux: write 5 to clear_refs).
    static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}

func registrations(_ range: Range<Int>) -> [PushToStartRegistration] {
    range.map { index in
        PushToStartRegistration(
            environment: .production,
            attributesType: "MatchAttributes",
            token: String(index, radix: 16).leftPadded(to: 64),
            deviceID: "device-\(index)",
            userID: "user-\(index % 50_000)",
            tags: index.isMultiple(of: 10) ? ["vip", "eu"] : ["eu"],
            iosVersion: index.isMultiple(of: 4) ? "17.6" : "18.3",
            frequentPushesEnabled: index.isMultiple(of: 3)
        )
    }
}

func fixed(_ value: Double, _ digits: Int) -> String {
    String(format: "%.\(digits)f", value)
}

extension String {
    func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}

/// Writes `count` tokens in batches; returns seconds.
func upsert(_ store: some MarqueeStore, app: AppID, count: Int, batch: Int, at: Date) async throws -> Double {
    let start = ContinuousClock.now
    var written = 0
    while written < count {
        let next = min(written + batch, count)
        _ = try await store.upsertPushToStartTokens(appID: app, registrations(written..<next), at: at)
        written = next
    }
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func run(_ options: Options, store: some MarqueeStore) async throws {
    let now = Date()
    let app = App(
        name: "Bench",
        bundleID: "com.example.bench",
        teamID: "TEAM123456",
        environments: [.production],
        createdAt: now
    )
    try await store.createApp(app)
    let label = "backend=\(options.backend) tokens=\(options.tokens)"
    switch options.mode {
    case "upsert":
        let insert = try await upsert(store, app: app.id, count: options.tokens, batch: options.batch, at: now)
        print(
            """
            upsert-insert  \(label) batch=\(options.batch)  \(fixed(insert, 2)) s  \
            \(fixed(Double(options.tokens) / insert, 0)) tokens/s
            """
        )
        let refresh = try await upsert(
            store,
            app: app.id,
            count: options.tokens,
            batch: options.batch,
            at: now.addingTimeInterval(60)
        )
        print(
            """
            upsert-refresh \(label) batch=\(options.batch)  \(fixed(refresh, 2)) s  \
            \(fixed(Double(options.tokens) / refresh, 0)) tokens/s
            """
        )
    case "stream":
        let seed = try await upsert(store, app: app.id, count: options.tokens, batch: options.batch, at: now)
        print("stream-seed    \(label)  \(fixed(seed, 2)) s  \(fixed(Double(options.tokens) / seed, 0)) tokens/s")
        Memory.resetPeak()
        let before = Memory.residentKiB
        let start = ContinuousClock.now
        var seen = 0
        var checksum = 0
        let query = AudienceQuery(appID: app.id, environment: .production, attributesType: "MatchAttributes")
        for try await page in store.audience(query, pageSize: options.page) {
            seen += page.count
            checksum &+= Int(page[page.count - 1].rowID)
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard seen == options.tokens else { throw BenchmarkError("streamed \(seen) of \(options.tokens) tokens") }
        let peak = Memory.peakKiB
        print(
            """
            stream         \(label) page=\(options.page)  \(fixed(seconds, 2)) s  \
            \(fixed(Double(seen) / seconds, 0)) tokens/s  
            """
                + "rss-before=\(before) KiB  peak-during=\(peak) KiB  growth=\(peak - before) KiB  "
                + "(checksum \(checksum))"
        )
    case "roundtrip":
        // One read by primary key at a time, as a request's path makes them: what one round trip
        // to the store costs its caller.
        for _ in 0..<200 { _ = try await store.app(app.id) }
        var latencies: [Double] = []
        latencies.reserveCapacity(options.tokens)
        for _ in 0..<options.tokens {
            let start = ContinuousClock.now
            _ = try await store.app(app.id)
            let elapsed = ContinuousClock.now - start
            latencies.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
        }
        latencies.sort()
        func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        print(
            """
            roundtrip      \(label)  p50=\(fixed(percentile(0.5), 3)) ms  p90=\(fixed(percentile(0.9), 3)) ms  \
            p99=\(fixed(percentile(0.99), 3)) ms
            """
        )
    default:
        throw BenchmarkError("unknown mode \(options.mode)")
    }
}

func postgresConfiguration(database: String) throws -> PostgresClient.Configuration {
    let environment = ProcessInfo.processInfo.environment
    guard let host = environment["POSTGRES_HOST"], let port = environment["POSTGRES_PORT"].flatMap(Int.init),
        let user = environment["POSTGRES_USER"], let password = environment["POSTGRES_PASSWORD"]
    else { throw BenchmarkError("POSTGRES_* not set: run Benchmarks/run-storage.sh") }
    return PostgresClient.Configuration(
        host: host,
        port: port,
        username: user,
        password: password,
        database: database,
        tls: .disable
    )
}

func withClient<Result: Sendable>(
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

let options = try Options(Array(CommandLine.arguments.dropFirst()))
let migrations = MigrationDirectory.sources
switch options.backend {
case "postgres":
    let adminDatabase = ProcessInfo.processInfo.environment["POSTGRES_DATABASE"] ?? "postgres"
    let database = "marquee_bench_\(UInt32.random(in: 0 ... .max))"
    _ = try await withClient(try postgresConfiguration(database: adminDatabase)) { client in
        try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(database)"))
    }
    var failure: (any Error)?
    do {
        try await withClient(try postgresConfiguration(database: database)) { client in
            let store = PostgresStore(
                client: client,
                configuration: StoreConfiguration(sealer: nil, migrations: migrations)
            )
            try await store.migrate()
            try await run(options, store: store)
        }
    } catch {
        failure = error
    }
    _ = try await withClient(try postgresConfiguration(database: adminDatabase)) { client in
        try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(database) WITH (FORCE)"))
    }
    if let failure { throw failure }
case "sqlite":
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("marquee-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = try await SQLiteStore.open(
        path: folder.appendingPathComponent("bench.sqlite").path,
        configuration: StoreConfiguration(sealer: nil, migrations: migrations)
    )
    try await store.migrate()
    try await run(options, store: store)
    try await store.close()
default:
    throw BenchmarkError("unknown backend \(options.backend)")
}
