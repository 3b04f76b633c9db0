// swift-tools-version: 6.0
// The ActiveObjects benchmarks: ActiveObjects vs hand-written sqlite3 C-API code vs GRDB,
// in one process, same data, same workloads. Its own package so that the library itself
// keeps no dependencies.
//
//     swift run -c release --package-path Benchmarks            # full run (about 6 min), writes results.svg
//     swift run -c release --package-path Benchmarks Benchmarks --quick   # smoke run
//     swift run -c release --package-path Benchmarks Benchmarks memory    # memory workloads only
import PackageDescription

let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "ActiveObjects", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        // The sync workloads' hub behind a real HTTP server on 127.0.0.1 (as Examples/TodoServer).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.0.0"),   // already Hummingbird's: its logger, quiet
    ],
    targets: [
        // The raw reference talks to the sqlite3 C API directly. The root package's CSQLite is
        // a target, not a product, so this package declares its own module map for the same
        // system header (a distinct module name, so it cannot clash with CSQLite or GRDBSQLite).
        .systemLibrary(
            name: "CSQLiteBench",
            path: "Sources/CSQLiteBench",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "CSQLiteBench",
                .product(name: "ActiveObjects", package: "ActiveObjects"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Benchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)
