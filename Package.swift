// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "ActiveObjects",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "ActiveObjects", targets: ["ActiveObjects"]),
        .executable(name: "Sample", targets: ["Sample"]),
        .executable(name: "activeobjects-gen", targets: ["activeobjects-gen"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // One C global the library's inlinable code reads (the count of prototypes being
        // created): C, so that reading it needs no lazy initialization.
        .target(
            name: "CActiveObjectsSupport",
            path: "Sources/CActiveObjectsSupport"
        ),
        .target(
            name: "ActiveObjects",
            dependencies: ["CSQLite", "CActiveObjectsSupport"],
            path: "Sources/ActiveObjects"
        ),
        .executableTarget(
            name: "Sample",
            dependencies: ["ActiveObjects"],
            path: "Sample"
        ),
        // The code generator: the logic is a library so that tests can call it directly;
        // it reads schemas through ActiveObjects and splits .sql scripts with sqlite3_complete.
        .target(
            name: "ActiveObjectsGenerator",
            dependencies: ["ActiveObjects", "CSQLite"],
            path: "Sources/ActiveObjectsGenerator"
        ),
        .executableTarget(
            name: "activeobjects-gen",
            dependencies: ["ActiveObjectsGenerator"],
            path: "Sources/activeobjects-gen"
        ),
        .testTarget(
            name: "ActiveObjectsGeneratorTests",
            dependencies: ["ActiveObjectsGenerator", "ActiveObjects"],
            path: "Tests/ActiveObjectsGeneratorTests"
        ),
        .testTarget(
            name: "ActiveObjectsTests",
            dependencies: ["ActiveObjects"],
            path: "Tests/ActiveObjectsTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
