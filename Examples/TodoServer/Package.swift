// swift-tools-version: 6.0
// TodoServer: a small JSON API over ActiveObjects, served by Hummingbird 2.
//
//     swift run -c release --package-path Examples/TodoServer TodoServer --port 8080 [--db PATH]
//
// The database is the file given by --db (or the environment variable TODO_DB); with neither,
// `TodoServer/todos.sqlite` in the user's data folder ($XDG_DATA_HOME, else ~/.local/share, on
// Linux; ~/Library/Application Support on macOS), or the system's temporary folder when that
// cannot be had — never the current directory. The server prints the path at startup.
// Every error answer is JSON: `{"error":{"message":"…"}}` (see Sources/TodoServer/main.swift
// and Sources/TodoAPI/JSONErrorMiddleware.swift).
//
// Its own package, so that the library keeps no dependencies. `.ci/check-examples` builds it,
// starts it on a loopback port, checks every endpoint and runs a load test against it.
import PackageDescription

let package = Package(
    name: "TodoServer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "ActiveObjects", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        // Both already dependencies of Hummingbird: logging, and ending the live endpoint's
        // streams on graceful shutdown.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
    ],
    targets: [
        // The model, the migrations and the routes: a library, so that the executable stays a
        // few lines of configuration.
        .target(
            name: "TodoAPI",
            dependencies: [
                .product(name: "ActiveObjects", package: "ActiveObjects"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "TodoServer",
            dependencies: [
                "TodoAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The model and the migrations: `swift test --package-path Examples/TodoServer`.
        .testTarget(
            name: "TodoAPITests",
            dependencies: [
                "TodoAPI",
                .product(name: "ActiveObjects", package: "ActiveObjects"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
