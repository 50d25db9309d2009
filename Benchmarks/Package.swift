// swift-tools-version:6.1
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name (`main`, or a worktree's name), not the
// manifest's package name.
let marquee = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// Benchmarks live in their own package so that the main build and CI stay lean.
// Release builds only: `swift build -c release` here, or the scripts next to this file.
let package = Package(
    name: "marquee-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
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
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
