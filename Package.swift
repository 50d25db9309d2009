// swift-tools-version:6.1
import PackageDescription

/// Settings every Marquee target shares: Swift 6 language mode comes from `swiftLanguageModes`,
/// these make existentials and imports explicit.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "marquee",
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "marquee", targets: ["MarqueeCLI"]),
        .library(name: "MarqueeCore", targets: ["MarqueeCore"]),
        .library(name: "MarqueeAPNS", targets: ["MarqueeAPNS"]),
        .library(name: "MarqueeEmulator", targets: ["MarqueeEmulator"]),
        .library(name: "MarqueeStorage", targets: ["MarqueeStorage"]),
        .library(name: "MarqueeEngine", targets: ["MarqueeEngine"]),
        .library(name: "MarqueeServer", targets: ["MarqueeServer"]),
        .library(name: "MarqueeClient", targets: ["MarqueeClient"]),
        .library(name: "MarqueeKit", targets: ["MarqueeKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "5.0.1"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    ],
    targets: [
        // Domain values, Live Activity payloads, the APNs vocabulary and the store protocols.
        // Foundation only: no I/O.
        .target(
            name: "MarqueeCore",
            swiftSettings: swiftSettings
        ),
        // The APNs provider client: ES256 provider tokens, pooled HTTP/2 connections, device pushes,
        // broadcasts and channel management.
        .target(
            name: "MarqueeAPNS",
            dependencies: [
                "MarqueeCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // A local APNs: the same endpoints and rules, virtual devices, fault injection, inspection API.
        .target(
            name: "MarqueeEmulator",
            dependencies: [
                "MarqueeCore",
                // The app model plays the app's side with MarqueeKit's own decisions and requests.
                "MarqueeKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                // The emulator is a Service: it runs in `marquee serve`'s and `marquee emulator`'s groups.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // PostgreSQL and SQLite stores behind MarqueeCore's protocols; migrations from `sql/`.
        .target(
            name: "MarqueeStorage",
            dependencies: [
                "MarqueeCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // ConnectionPoolError: a start waits out the pool's circuit breaker too.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The use cases: apps and keys, events and their channels at APNs, the token registry. Knows
        // no HTTP and no SQL: it works on Core's store protocols and the APNs client.
        .target(
            name: "MarqueeEngine",
            dependencies: [
                "MarqueeCore",
                "MarqueeAPNS",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The REST API's types and server protocol, generated from `openapi.yaml` at build time.
        .target(
            name: "MarqueeAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            resources: [.copy("openapi.yaml")],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // The service: Hummingbird routes generated from the OpenAPI document, authentication,
        // problem documents, configuration, and the ServiceGroup `marquee serve` runs.
        .target(
            name: "MarqueeServer",
            dependencies: [
                "MarqueeCore",
                "MarqueeAPNS",
                "MarqueeEngine",
                "MarqueeEmulator",
                "MarqueeKit",
                "MarqueeStorage",
                "MarqueeAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["ConsoleAssetsPlugin"]
        ),
        // The web console's files (`console/`) as a Swift source compiled into MarqueeServer, so
        // that the binary serves them wherever it runs, with no resource bundle to lose: the
        // plugin runs the generator on every change of a file there.
        .executableTarget(
            name: "ConsoleAssetsGenerator",
            swiftSettings: swiftSettings
        ),
        .plugin(
            name: "ConsoleAssetsPlugin",
            capability: .buildTool(),
            dependencies: ["ConsoleAssetsGenerator"]
        ),
        // The API's client for the CLI, `marquee demo` and producers' Swift code: the client generated
        // from the same `openapi.yaml` (a link to MarqueeAPI's) into a module of its own, so that the
        // server's build compiles no client code and the client pulls in no server code (the price:
        // the types are compiled once per module); over AsyncHTTPClient, which streams response
        // bodies (server-sent events) on Linux, where URLSession buffers them.
        .target(
            name: "MarqueeClient",
            dependencies: [
                "MarqueeCore",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // The app's side, for iOS apps to add: registers the app's tokens as they rotate, answers
        // Marquee's background push, reports what ActivityKit shows and ends a second activity of
        // an event. Foundation only (no NIO, no other package), so that an app pulls in nothing
        // else; its ActivityKit glue compiles only where ActivityKit exists.
        .target(
            name: "MarqueeKit",
            swiftSettings: swiftSettings
        ),
        // What tests of the service share: stores on both backends, the emulator, a running server.
        .target(
            name: "MarqueeTesting",
            dependencies: [
                "MarqueeCore",
                "MarqueeAPNS",
                "MarqueeEngine",
                "MarqueeEmulator",
                "MarqueeKit",
                "MarqueeServer",
                "MarqueeStorage",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            path: "Tests/MarqueeTesting",
            swiftSettings: swiftSettings
        ),
        // The `marquee` command line: serve, migrate, emulator, and the commands that talk to a
        // running server through MarqueeClient.
        .executableTarget(
            name: "MarqueeCLI",
            dependencies: [
                "MarqueeCore",
                "MarqueeClient",
                "MarqueeAPNS",
                "MarqueeEmulator",
                "MarqueeStorage",
                "MarqueeServer",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeCoreTests",
            dependencies: ["MarqueeCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeAPNSTests",
            dependencies: [
                "MarqueeCore",
                "MarqueeAPNS",
                "MarqueeEmulator",
                "MarqueeTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeEmulatorTests",
            dependencies: [
                "MarqueeCore",
                "MarqueeEmulator",
                "MarqueeKit",
                "MarqueeTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeStorageTests",
            dependencies: [
                "MarqueeCore",
                "MarqueeEngine",
                "MarqueeStorage",
                "MarqueeTesting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeEngineTests",
            dependencies: [
                "MarqueeCore",
                "MarqueeAPNS",
                "MarqueeEngine",
                "MarqueeStorage",
                "MarqueeTesting",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeServerTests",
            dependencies: [
                "MarqueeCore",
                "MarqueeAPNS",
                "MarqueeEngine",
                "MarqueeEmulator",
                "MarqueeServer",
                "MarqueeStorage",
                "MarqueeTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeCLITests",
            dependencies: [
                "MarqueeCLI",
                "MarqueeClient",
                "MarqueeCore",
                "MarqueeEmulator",
                "MarqueeServer",
                "MarqueeTesting",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeKitTests",
            dependencies: [
                "MarqueeKit",
                "MarqueeTesting",
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
