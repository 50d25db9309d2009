// swift-tools-version:6.1
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder (`main`, a worktree's or a clone's own name), not
// after its `name:`; the products below are looked up under that identity.
let marquee = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// Benchmarks live in their own package so that the main build and CI stay lean.
// Release builds only: `swift build -c release` here, or the scripts next to this file.
let package = Package(
    name: "marquee-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        // The APNs transport against the benchmark sink: same request shape as h2load-ceiling.sh.
        // Run through run-transport.sh, which measures the h2load ceiling in the same run.
        .executableTarget(
            name: "MarqueeTransportBenchmark",
            dependencies: [
                .product(name: "MarqueeAPNS", package: marquee),
                .product(name: "MarqueeCore", package: marquee),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/MarqueeTransportBenchmark",
            swiftSettings: swiftSettings
        ),
        // Storage: bulk upsert of push-to-start tokens and streaming a large audience in bounded
        // memory. Run through run-storage.sh, which starts a throwaway PostgreSQL.
        .executableTarget(
            name: "MarqueeStorageBenchmark",
            dependencies: [
                .product(name: "MarqueeStorage", package: marquee),
                .product(name: "MarqueeCore", package: marquee),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/MarqueeStorageBenchmark",
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
