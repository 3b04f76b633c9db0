// swift-tools-version: 6.0
// The ActiveObjects benchmarks: ActiveObjects vs hand-written sqlite3 C-API code vs GRDB,
// in one process, same data, same workloads. Its own package so that the library itself
// keeps no dependencies.
//
//     swift run -c release --package-path Benchmarks            # full run (about 5 min), writes results.svg
//     swift run -c release --package-path Benchmarks Benchmarks --quick   # smoke run
//     swift run -c release --package-path Benchmarks Benchmarks memory    # memory workloads only
import PackageDescription

let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "ActiveObjects", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
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
            ],
            path: "Sources/Benchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)
