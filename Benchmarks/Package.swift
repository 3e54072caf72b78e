// swift-tools-version:6.1
import PackageDescription

/// Compares Curlew with AsyncHTTPClient, URLSession and raw libcurl against a local nginx.
/// A package of its own so that its dependencies (SwiftNIO, AsyncHTTPClient) never reach
/// Curlew's users. Run it through `Benchmarks/run.sh`.
let package = Package(
    name: "CurlewBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Curlew", path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // TLS trust roots for AsyncHTTPClient in the HTTPS rows (already in its graph).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        // The generated-client rows (--clients openapi-curlew,openapi-ahc): the same client of
        // Benchmarks/openapi on CurlewOpenAPI's transport and on AsyncHTTPClientTransport.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", exact: "1.5.0"),
        // FleetBenchmark's `--explore` rows drive postgres-nio directly (already in Curlew's graph).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // And on URLSessionTransport (--clients openapi-urlsession).
        .package(url: "https://github.com/apple/swift-openapi-urlsession", exact: "1.4.0"),
    ],
    targets: [
        // The fleet's second tier through postgres-nio next to pgbench (Benchmarks/fleet.sh).
        .executableTarget(
            name: "FleetBenchmark",
            dependencies: [
                .product(name: "Curlew", package: "Curlew"), .product(name: "CurlewFleet", package: "Curlew"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Raw libcurl for the fourth column: the same library Curlew wraps, driven directly.
        .systemLibrary(
            name: "CLibcurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(name: "CLibcurlShim", dependencies: ["CLibcurl"]),
        .executableTarget(
            name: "CurlewBenchmark",
            dependencies: [
                "CLibcurlShim",
                .product(name: "Curlew", package: "Curlew"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "CurlewOpenAPI", package: "Curlew"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Issue 26's event-stream soak (scripts/sse-soak.sh): 200 SSE streams through the generated
        // client of Benchmarks/openapi-sse on CurlewTransport for minutes while ordinary calls
        // are timed; the server (a LoopbackServer) runs as a second process of the same binary.
        .executableTarget(
            name: "SSESoak",
            dependencies: [
                .product(name: "Curlew", package: "Curlew"),
                .product(name: "CurlewOpenAPI", package: "Curlew"),
                .product(name: "CurlewTestServer", package: "Curlew"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
