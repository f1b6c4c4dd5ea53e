// swift-tools-version:6.0
import Foundation
import PackageDescription

/// Fuzz targets are only part of the graph when `PULSEGATE_FUZZ=1`, because they
/// need `--sanitize=fuzzer` (libFuzzer provides `main`). See `scripts/fuzz.sh`.
let fuzzing = ProcessInfo.processInfo.environment["PULSEGATE_FUZZ"] == "1"

// MARK: - System C libraries (Debian packages, discovered through pkg-config)

let systemLibraries: [Target] = [
    .systemLibrary(
        name: "CSQLite", path: "Sources/System/CSQLite", pkgConfig: "sqlite3",
        providers: [.apt(["libsqlite3-dev"])]),
    .systemLibrary(
        name: "CZstd", path: "Sources/System/CZstd", pkgConfig: "libzstd",
        providers: [.apt(["libzstd-dev"])]),
    .systemLibrary(
        name: "CZlib", path: "Sources/System/CZlib", pkgConfig: "zlib",
        providers: [.apt(["zlib1g-dev"])]),
    .systemLibrary(
        name: "CCurl", path: "Sources/System/CCurl", pkgConfig: "libcurl",
        providers: [.apt(["libcurl4-openssl-dev"])]),
    .systemLibrary(
        name: "CMicroHTTPD", path: "Sources/System/CMicroHTTPD", pkgConfig: "libmicrohttpd",
        providers: [.apt(["libmicrohttpd-dev"])]),
    // GnuTLS, which Debian's libmicrohttpd is built with: the shims load certificates for it.
    .systemLibrary(
        name: "CGnuTLS", path: "Sources/System/CGnuTLS", pkgConfig: "gnutls",
        providers: [.apt(["libgnutls28-dev"])]),
    .systemLibrary(
        name: "CSimdjson", path: "Sources/System/CSimdjson", pkgConfig: "simdjson",
        providers: [.apt(["libsimdjson-dev"])]),
    .systemLibrary(
        name: "CPostgres", path: "Sources/System/CPostgres", pkgConfig: "libpq",
        providers: [.apt(["libpq-dev"])]),
    // Linux headers the Glibc module does not export (epoll, eventfd); no library to link.
    .systemLibrary(name: "CLinuxEvents", path: "Sources/System/CLinuxEvents"),
]

// MARK: - Native shims

let shims: [Target] = [
    // Typed, prefixed, non-variadic wrappers for variadic C APIs (MHD_start_daemon, curl_easy_setopt).
    .target(
        name: "CPulseShims", dependencies: ["CCurl", "CMicroHTTPD", "CGnuTLS"],
        path: "Sources/Native/CPulseShims"),
    // simdjson (C++) behind a small C API.
    .target(
        name: "CPulseSimdJSON", dependencies: ["CSimdjson"],
        path: "Sources/Native/CPulseSimdJSON",
        cxxSettings: [
            // Matches the Debian build of libsimdjson (pkg-config reports it, SwiftPM drops it).
            .define("SIMDJSON_THREADS_ENABLED", to: "1"),
            .unsafeFlags(["-O3"]),
        ]),
]

// MARK: - Swift modules, one per component

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let modules: [Target] = [
    // The one compression module: zstd and the deflate family with one bounded pool of reused
    // codec contexts, shared by msgtrans, the gateway, the HTTP body decoders and the uploader.
    // The shared kit: clocks and sleeping, backoff, randomness, the error shape, civil time, flags.
    .target(name: "PulseKit", swiftSettings: swiftSettings),
    .target(name: "PulseCompression", dependencies: ["CZstd", "CZlib", "PulseKit"], swiftSettings: swiftSettings),
    .target(
        name: "MsgTrans", dependencies: ["PulseCompression", "PulseKit"],
        swiftSettings: swiftSettings),
    .target(
        name: "MsgTransRuntime", dependencies: ["MsgTrans", "CLinuxEvents", "PulseKit"],
        swiftSettings: swiftSettings),
    .target(
        name: "PulseJSON", dependencies: ["CPulseSimdJSON", "PulseKit"],
        swiftSettings: swiftSettings),
    .target(
        name: "PulseProtocol", dependencies: ["PulseJSON", "PulseKit"],
        swiftSettings: swiftSettings),
    .target(
        name: "OTLPProtobuf", dependencies: ["PulseJSON", "PulseKit"],
        swiftSettings: swiftSettings),
    .target(name: "PulseStorage", dependencies: ["CSQLite", "PulseKit"], swiftSettings: swiftSettings),
    // The PostgreSQL client side of fleet mode: libpq on threads the executor owns, pipelined
    // group commit, migrations.
    .target(name: "PulsePostgres", dependencies: ["CPostgres", "PulseKit"], swiftSettings: swiftSettings),
    .target(
        name: "PulseClient", dependencies: ["MsgTransRuntime", "MsgTrans", "PulseProtocol", "PulseJSON", "PulseKit"],
        swiftSettings: swiftSettings),
    .target(
        name: "PulseHTTP", dependencies: ["CMicroHTTPD", "CPulseShims", "PulseCompression", "PulseKit"],
        swiftSettings: swiftSettings),
    .target(
        name: "PulseIngest",
        dependencies: [
            "MsgTransRuntime", "MsgTrans", "PulseProtocol", "PulseJSON", "PulseStorage", "PulseHTTP", "PulseKit",
            "PulseCompression",
        ],
        swiftSettings: swiftSettings),
    .target(
        name: "PulseGateway",
        dependencies: [
            "PulseHTTP", "PulseStorage", "PulseJSON", "PulseProtocol", "PulseClient", "MsgTrans", "MsgTransRuntime",
            "OTLPProtobuf", "PulseHashing", "CPulseShims", "PulsePostgres", "PulseKit",
        ],
        swiftSettings: swiftSettings),
    // SHA-256 (hardware-accelerated block function from CPulseShims) and hex, shared by the
    // gateway and the uploader.
    .target(name: "PulseHashing", dependencies: ["CPulseShims", "PulseKit"], swiftSettings: swiftSettings),
    .target(
        name: "PulseUploader",
        dependencies: [
            "PulseStorage", "PulseJSON", "PulseProtocol", "PulseHashing", "OTLPProtobuf", "CCurl", "CPulseShims",
            "PulseCompression", "PulseKit",
        ],
        swiftSettings: swiftSettings),
    .target(
        name: "PulseGateCLI",
        dependencies: [
            "PulseJSON", "PulseProtocol", "PulseGateway", "PulseIngest", "PulseUploader", "PulseKit", "MsgTransRuntime",
        ],
        swiftSettings: swiftSettings),
    .executableTarget(
        name: "pulsegate", dependencies: ["PulseGateCLI"],
        swiftSettings: swiftSettings),
    // An app linking the PulseUploader product: claim → transfer (curl as the OS) → settle, public API only.
    .executableTarget(
        name: "uploader-transfer-example", dependencies: ["PulseUploader"], path: "Examples/uploader-transfer",
        swiftSettings: swiftSettings),
    .executableTarget(
        name: "pulsegate-bench",
        dependencies: ["PulseJSON", "PulseProtocol", "PulseStorage", "PulseGateway", "PulseKit"],
        path: "Benchmarks/pulsegate-bench",
        swiftSettings: swiftSettings),
    // The process figures and the client child processes both idle-connection benchmarks use.
    .target(
        name: "BenchSupport", dependencies: ["PulseKit"], path: "Benchmarks/BenchSupport",
        swiftSettings: swiftSettings),
    .executableTarget(
        name: "ingest-bench", dependencies: ["BenchSupport", "PulseIngest", "MsgTrans", "PulseKit", "MsgTransRuntime"],
        path: "Benchmarks/ingest-bench",
        swiftSettings: swiftSettings),
    .executableTarget(
        name: "msgtrans-scale", dependencies: ["BenchSupport", "MsgTransRuntime", "MsgTrans", "PulseKit"],
        path: "Benchmarks/msgtrans-scale",
        swiftSettings: swiftSettings),
]

let tests: [Target] = [
    // Helpers shared by several test targets: a raw-socket HTTP/1.1 client, loopback listeners and
    // blocking socket I/O for hand-written peers, scratch directories and body compressors.
    .target(
        name: "PulseTestSupport", dependencies: ["CZlib", "CZstd", "PulseKit"], path: "Tests/PulseTestSupport",
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulseKitTests", dependencies: ["PulseKit", "PulseTestSupport"], exclude: ["README.md"],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "MsgTransTests", dependencies: ["MsgTrans", "PulseCompression", "PulseKit"],
        resources: [.copy("Fixtures")],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "MsgTransRuntimeTests", dependencies: ["MsgTransRuntime", "MsgTrans", "PulseTestSupport", "PulseKit"],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulseJSONTests", dependencies: ["PulseJSON", "PulseKit"],
        resources: [.copy("Fixtures")],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulseProtocolTests", dependencies: ["PulseProtocol", "MsgTrans", "PulseJSON", "PulseKit"],
        resources: [.copy("Fixtures")],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "OTLPProtobufTests", dependencies: ["OTLPProtobuf", "PulseJSON", "PulseTestSupport", "PulseKit"],
        resources: [.copy("Fixtures")],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulseStorageTests", dependencies: ["PulseStorage", "PulseTestSupport", "PulseKit"],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulsePostgresTests", dependencies: ["PulsePostgres", "PulseTestSupport", "PulseKit"],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulseClientTests",
        dependencies: [
            "PulseClient", "PulseIngest", "MsgTransRuntime", "MsgTrans", "PulseProtocol", "PulseJSON", "PulseKit",
            "PulseTestSupport",
        ],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulseHTTPTests", dependencies: ["PulseHTTP", "PulseTestSupport", "PulseKit"],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulseIngestTests",
        dependencies: [
            "PulseIngest", "PulseProtocol", "PulseJSON", "PulseStorage", "MsgTrans", "PulseTestSupport",
            "MsgTransRuntime", "PulseKit",
        ],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulseGatewayTests",
        dependencies: [
            "PulseGateway", "PulseHTTP", "PulseStorage", "PulseJSON", "PulseProtocol", "PulseHashing", "MsgTrans",
            "MsgTransRuntime", "PulseTestSupport", "CPulseShims", "PulseKit", "OTLPProtobuf",
        ],
        // Expected output of GoldenOutputTests, read from the source tree.
        exclude: ["Golden"],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulseUploaderTests",
        dependencies: [
            "PulseUploader", "PulseStorage", "PulseJSON", "PulseProtocol", "PulseGateway", "PulseHashing",
            "PulseTestSupport", "PulseKit", "OTLPProtobuf",
        ],
        swiftSettings: swiftSettings),
    .testTarget(
        name: "PulseGateCLITests",
        dependencies: [
            "PulseGateCLI", "PulseGateway", "PulseIngest", "PulseUploader", "PulseProtocol", "PulseHashing",
            "PulseHTTP", "PulseTestSupport", "MsgTrans", "PulseJSON", "PulseStorage", "PulseKit",
        ],
        swiftSettings: swiftSettings),
]

let fuzzTargets: [Target] =
    fuzzing
    ? [
        .executableTarget(
            name: "fuzz-frame", dependencies: ["MsgTrans"], path: "Fuzz/fuzz-frame",
            swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "fuzz-json", dependencies: ["PulseGateway", "PulseJSON", "PulseKit"], path: "Fuzz/fuzz-json",
            swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "fuzz-protobuf", dependencies: ["OTLPProtobuf", "PulseGateway", "PulseJSON", "PulseKit"],
            path: "Fuzz/fuzz-protobuf",
            swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])]),
    ] : []

let package = Package(
    name: "PulseGate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pulsegate", targets: ["pulsegate"]),
        .library(name: "MsgTrans", targets: ["MsgTrans"]),
        .library(name: "PulseJSON", targets: ["PulseJSON"]),
        .library(name: "PulseProtocol", targets: ["PulseProtocol"]),
        .library(name: "PulseUploader", targets: ["PulseUploader"]),
    ],
    targets: systemLibraries + shims + modules + tests + fuzzTargets,
    cxxLanguageStandard: .cxx17
)
