// swift-tools-version:6.1
import PackageDescription

/// The cache rows of BENCHMARKS.md without the comparison clients: see Sources/CacheHitBench/main.swift.

let package = Package(
    name: "CacheHitBench",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Curlew", path: "../..")],
    targets: [
        .executableTarget(
            name: "CacheHitBench", dependencies: [.product(name: "Curlew", package: "Curlew")],
            swiftSettings: [.swiftLanguageMode(.v6)])
    ]
)
