// swift-tools-version:6.1
import PackageDescription

/// One set of Swift settings for every target: Swift 6 language mode, strict concurrency is implied.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// `CURLEW_WITHOUT_FLEET=1` leaves out CurlewFleet, its tests and postgres-nio. The
/// AddressSanitizer run sets it (scripts/sanitize.sh): the fleet has no unsafe code of its own,
/// and building postgres-nio and its TLS stack again under the sanitizer would cost minutes of
/// every CI run. Everything else builds either way.
let withFleet = Context.environment["CURLEW_WITHOUT_FLEET"] != "1"

/// What exists only with the fleet.
func fleet<T>(_ items: [T]) -> [T] { withFleet ? items : [] }

let package = Package(
    name: "Curlew",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Curlew", targets: ["Curlew"]),
        // The engine and its vocabulary on their own, for code that needs no client (Curlew
        // re-exports it).
        .library(name: "CurlewCore", targets: ["CurlewCore"]),
        // Hedging, circuit breakers and adaptive concurrency limits: middleware on Curlew's public
        // and `package` API, a product of its own so that `import Curlew` shows none of it.
        .library(name: "CurlewResilience", targets: ["CurlewResilience"]),
        // Lenient and polymorphic decoding (`@AutoCast`, `@Default`, `@Scoped`, `@Polymorphic`…,
        // `@Validated`): plain `Decodable` wrappers that need no HTTP, a product of their own.
        .library(name: "CurlewDecoding", targets: ["CurlewDecoding"]),
        .library(name: "CurlewTesting", targets: ["CurlewTesting"]),
        // A scriptable HTTP/1.1 server on 127.0.0.1 for users' own tests. A product of its own:
        // only a test target that asks for it links SwiftNIO, never an app that uses Curlew.
        .library(name: "CurlewTestServer", targets: ["LoopbackServer"]),
        // A swift-openapi-runtime `ClientTransport` on Curlew: a product of its own, so only code
        // that asks for it links the OpenAPI runtime (the `Curlew` target never does).
        .library(name: "CurlewOpenAPI", targets: ["CurlewOpenAPI"]),
        .executable(name: "SearchDemo", targets: ["SearchDemo"]),
    ]
        + fleet([
            // A fleet of instances sharing a second cache tier, invalidations, single-flight and
            // limits through PostgreSQL. A product of its own: only a service that asks for it
            // links postgres-nio.
            .library(name: "CurlewFleet", targets: ["CurlewFleet"])
        ]),
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // Observability: metrics and tracing are no-ops until the application bootstraps them.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // `swift package generate-documentation --target Curlew` builds the DocC catalog offline.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // For the CurlewOpenAPI product only (it depends on swift-http-types, already here).
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
    ]
        + fleet([
            // CurlewFleet's PostgreSQL store only.
            .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2")
        ]),
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Also the headers of zlib, brotli's decoder and zstd: Curlew decodes gzip, deflate, br and
        // zstd bodies itself (CurlewCore/ContentCoding). Debian: zlib1g-dev, libbrotli-dev, libzstd-dev.
        .target(
            name: "CCurlShim", dependencies: ["CCurl"],
            linkerSettings: [.linkedLibrary("z"), .linkedLibrary("brotlidec"), .linkedLibrary("zstd")]),
        // ThreadSanitizer builds only (`scripts/sanitize.sh thread`, -DCURLEW_TSAN): a `Mutex` whose
        // lock hand-over TSan can see. Compiled always, used by nothing otherwise.
        .target(name: "CTSanHooks"),
        .target(name: "SanitizerSupport", dependencies: ["CTSanHooks"], swiftSettings: swiftSettings),
        // The engine and the vocabulary it speaks: libcurl's multi interface on engine threads,
        // easy handles and the transfer state machine, prepared requests, transfer and connection
        // options, errors. It depends on nothing above it (the way HummingbirdCore sits under
        // Hummingbird), so a wrong-way import does not compile; `Curlew` re-exports its public API.
        .target(
            name: "CurlewCore",
            dependencies: [
                "CCurlShim", "SanitizerSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Curlew",
            dependencies: [
                "CurlewCore", "CCurlShim", "SanitizerSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // The signals that begin a TransportService's drain.
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The resilience middleware (hedging, circuit breaker, adaptive concurrency): it needs only
        // what the middleware protocol and the `package` seams of Curlew give it.
        .target(
            name: "CurlewResilience",
            dependencies: [
                "Curlew", "SanitizerSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // The decoding wrappers: they need only Curlew's JSON and validation vocabulary
        // (`ValidatableModel`, `ValidationFailure`) and its `package` coding key.
        .target(
            name: "CurlewDecoding",
            dependencies: ["Curlew"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CurlewOpenAPI",
            dependencies: [
                "Curlew",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CurlewTesting",
            // CurlewDecoding: the mock generator steers its wrappers (an allowed value for `Scoped`,
            // each family member for `Polymorphic`).
            dependencies: ["Curlew", "CurlewDecoding", "SanitizerSupport", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: swiftSettings
        ),
        // A small HTTP/1.1 server on 127.0.0.1 used by the tests, by the demo's embedded API and,
        // through the CurlewTestServer product, by users' own test suites.
        .target(
            name: "LoopbackServer",
            dependencies: [
                "SanitizerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "SearchDemo",
            // CurlewDecoding for the lenient and polymorphic models.
            // CurlewResilience for the resilience step (hedging, circuit breaker, adaptive limit).
            // CurlewTesting for the tour's mock steps (fixtures, generated data); CurlewFleet for the
            // fleet step (its in-memory store: the tour needs no database).
            // CurlewOpenAPI for the generated-client step (its client generated once and committed
            // under OpenAPI/Generated).
            dependencies: [
                "Curlew", "CurlewDecoding", "CurlewResilience", "CurlewTesting", "LoopbackServer", "CurlewOpenAPI", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ] + fleet(["CurlewFleet"]),
            path: "Samples/SearchDemo",
            exclude: ["OpenAPI/openapi.yaml", "OpenAPI/openapi-generator-config.yaml"],
            swiftSettings: swiftSettings
        ),
        // The issue-scale resilience scenarios, measured (scripts/resilience-scenarios.sh); no tests.
        .executableTarget(
            name: "ResilienceScenarios",
            dependencies: ["Curlew", "CurlewResilience", "LoopbackServer"],
            path: "Samples/ResilienceScenarios",
            swiftSettings: swiftSettings
        ),
        // What the test targets share: the real servers of a plain `swift test` (TestServers,
        // started once per test process), a child-process runner, a client on a loopback server
        // (`withLoopback`) with its endpoints and gate, and the decoding models and mock clients
        // that CurlewTests and CurlewDecodingTests both decode. Not a product.
        .target(
            name: "TestSupport",
            dependencies: [
                "Curlew", "CurlewDecoding", "CurlewTesting", "LoopbackServer", "SanitizerSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/TestSupport", swiftSettings: swiftSettings),
        // The brotli and zstd encoders that compress the tests' fixtures (Debian: libbrotli-dev,
        // libzstd-dev). Not a product: the library links only the decoders.
        .target(
            name: "CTestCompression", path: "Tests/CTestCompression",
            linkerSettings: [.linkedLibrary("brotlienc"), .linkedLibrary("zstd")]),
        .testTarget(
            name: "CurlewTests",
            dependencies: [
                "Curlew", "CurlewCore", "CurlewDecoding", "CurlewTesting", "LoopbackServer", "CCurlShim", "SanitizerSupport", "TestSupport",
                "CTestCompression",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Mock/Fixtures")],
            swiftSettings: swiftSettings
        ),
        // CurlewDecoding's wrappers, decoded with Foundation's JSONDecoder and through a client.
        .testTarget(
            name: "CurlewDecodingTests",
            dependencies: ["CurlewDecoding", "Curlew", "LoopbackServer", "SanitizerSupport", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        // CurlewResilience (hedging, circuit breaker, adaptive concurrency) against the loopback server.
        .testTarget(
            name: "CurlewResilienceTests",
            dependencies: [
                "CurlewResilience", "Curlew", "LoopbackServer", "SanitizerSupport", "TestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // CurlewOpenAPI through a client generated once by swift-openapi-generator from
        // openapi.yaml and committed (Tests/CurlewOpenAPITests/Generated), against the loopback
        // server.
        .testTarget(
            name: "CurlewOpenAPITests",
            dependencies: [
                "CurlewOpenAPI", "Curlew", "CurlewTesting", "LoopbackServer", "SanitizerSupport", "TestSupport",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
            swiftSettings: swiftSettings
        ),
        // The README's swift blocks, extracted by scripts/readme-examples.py, compiled and run.
        .testTarget(
            name: "ReadmeExamples",
            dependencies: [
                "Curlew", "CurlewDecoding", "CurlewOpenAPI", "CurlewResilience", "CurlewTesting", "LoopbackServer", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ] + fleet(["CurlewFleet"]),
            path: "Tests/ReadmeExamples",
            swiftSettings: swiftSettings
        ),
    ]
        + fleet([
            .target(
                name: "CurlewFleet",
                dependencies: [
                    "Curlew", "SanitizerSupport",
                    .product(name: "HTTPTypes", package: "swift-http-types"),
                    .product(name: "PostgresNIO", package: "postgres-nio"),
                    .product(name: "Logging", package: "swift-log"),
                    .product(name: "Metrics", package: "swift-metrics"),
                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                    .product(name: "Tracing", package: "swift-distributed-tracing"),
                ],
                swiftSettings: swiftSettings
            ),
            // CurlewFleet against the in-memory store and a real PostgreSQL (scripts/postgres.sh,
            // CURLEW_POSTGRES_URL; started by TestServers under a plain `swift test`).
            .testTarget(
                name: "CurlewFleetTests",
                dependencies: [
                    "CurlewFleet", "Curlew", "LoopbackServer", "TestSupport", "SanitizerSupport",
                    .product(name: "PostgresNIO", package: "postgres-nio"),
                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                    .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                    .product(name: "MetricsTestKit", package: "swift-metrics"),
                ],
                swiftSettings: swiftSettings
            ),
        ])
)
