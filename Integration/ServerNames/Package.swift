// swift-tools-version:6.1
import PackageDescription

// Proves that a Hummingbird server can `import Hummingbird` and `import Curlew` in one file and
// still compile the README's examples unchanged: no public name of Curlew may be ambiguous there.
// Run it with `bash scripts/check-server-names.sh` from the repository root.

/// What every target here uses: Curlew beside Hummingbird.
let curlewAndHummingbird: [Target.Dependency] = [
    .product(name: "Curlew", package: "Curlew"),
    .product(name: "Hummingbird", package: "hummingbird"),
]

let package = Package(
    name: "ServerNames",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` because a path dependency is otherwise known by its directory name (main, a worktree…).
        .package(name: "Curlew", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // Samples/FanOutService's executable again (Sources/FanOutService is a symbolic link to its
        // sources): scripts/check-fanout-service.sh builds it here, so a test run compiles
        // Hummingbird and SwiftNIO once for both checks. The sample stays a package of its own.
        .executableTarget(
            name: "FanOutService",
            dependencies: curlewAndHummingbird + [
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Not a test target: its generated file must not see the README examples' own types.
        .target(
            name: "NameProbe",
            dependencies: curlewAndHummingbird + [
                .product(name: "CurlewDecoding", package: "Curlew"),
                .product(name: "CurlewResilience", package: "Curlew"),
                .product(name: "CurlewTesting", package: "Curlew"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "ServerNamesTests",
            dependencies: curlewAndHummingbird + [
                .product(name: "CurlewTesting", package: "Curlew"),
                // The README's decoding and resilience sections import them.
                .product(name: "CurlewDecoding", package: "Curlew"),
                .product(name: "CurlewResilience", package: "Curlew"),
                // The README's OpenAPI section imports it.
                .product(name: "CurlewOpenAPI", package: "Curlew"),
                .product(name: "CurlewTestServer", package: "Curlew"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
