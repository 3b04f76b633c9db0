// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "ActiveObjects",
    platforms: [.macOS(.v10_15), .iOS(.v13)],
    products: [
        .library(name: "ActiveObjects", targets: ["ActiveObjects"]),
        .executable(name: "Sample", targets: ["Sample"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "ActiveObjects",
            dependencies: ["CSQLite"],
            path: "Sources/ActiveObjects"
        ),
        .executableTarget(
            name: "Sample",
            dependencies: ["ActiveObjects"],
            path: "Sample"
        ),
        .testTarget(
            name: "ActiveObjectsTests",
            dependencies: ["ActiveObjects"],
            path: "Tests/ActiveObjectsTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
