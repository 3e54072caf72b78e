// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for every Curlew parser that reads bytes from the network or from disk.
// A package of its own, so nothing here is part of Curlew's products or its normal build; the
// targets reach the internal parsers through `@testable import Curlew` (debug builds only).
//
//     swift build -c debug -Xswiftc -sanitize=fuzzer,address   (or: bash scripts/fuzz.sh TARGET SECONDS)

let targets = [
    "FuzzJSONScanner", "FuzzResponseHead", "FuzzPercentDecoding", "FuzzEnvelope", "FuzzLenientDecoding",
    "FuzzContentDisposition", "FuzzMultipart", "FuzzCacheEntry", "FuzzFixtureName", "FuzzContentDecoding",
]

let package = Package(
    name: "CurlewFuzz",
    platforms: [.macOS(.v15)],
    products: targets.map { .executable(name: $0, targets: [$0]) },
    dependencies: [
        // `Curlew` is a symbolic link to the repository root, so the dependency is named `curlew`
        // whatever directory the repository was cloned into.
        .package(path: "Curlew"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .target(name: "CFuzzDriver"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzDriver"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ] + targets.map { name in
        .executableTarget(
            name: name,
            dependencies: [
                "FuzzSupport", .product(name: "Curlew", package: "Curlew"), .product(name: "CurlewCore", package: "Curlew"),
                .product(name: "CurlewTesting", package: "Curlew"), .product(name: "CurlewDecoding", package: "Curlew"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    }
)
