// swift-tools-version:6.1
import PackageDescription

// A Hummingbird service that fans out to an upstream through Curlew, runs in a ServiceGroup with
// the client's TransportService, drains on SIGTERM and logs with the incoming request id.
// A package of its own so that Curlew never depends on Hummingbird.
// Run it with `bash scripts/check-fanout-service.sh` from the repository root.
let package = Package(
    name: "FanOutService",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` because a path dependency is otherwise known by its directory name (main, a worktree…).
        .package(name: "Curlew", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Only FanOutBench (the side-by-side measurement) links AsyncHTTPClient.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "FanOutService",
            dependencies: [
                .product(name: "Curlew", package: "Curlew"),
                // `serve … --fleet <postgres URL>` (FleetMode.swift): instances sharing a cache,
                // purges and a queue limit through PostgreSQL.
                .product(name: "CurlewFleet", package: "Curlew"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The fleet option is compiled here only: Integration/ServerNames builds these sources
            // too (scripts/check-fanout-service.sh) without CurlewFleet and postgres-nio.
            swiftSettings: [.swiftLanguageMode(.v6), .define("CURLEW_FLEET")]
        ),
        // The same fan-out on Curlew and on AsyncHTTPClient, quiet: `scripts/service-table.sh`.
        .executableTarget(
            name: "FanOutBench",
            dependencies: [
                .product(name: "Curlew", package: "Curlew"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
