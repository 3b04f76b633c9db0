// swift-tools-version: 6.0
// The README's concurrency examples, compiled as a user would write them: a separate package
// in the Swift 6 language mode with complete concurrency checking, depending on ActiveObjects.
// No `@unchecked Sendable`, `nonisolated(unsafe)` or `@preconcurrency` in this code.
// Built by `.ci/check-swift6-examples`; `swift run` also executes it.
import PackageDescription

let package = Package(
    name: "Swift6Examples",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [.package(name: "ActiveObjects", path: "../..")],
    targets: [
        .executableTarget(
            name: "Swift6Examples",
            dependencies: [.product(name: "ActiveObjects", package: "ActiveObjects")],
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
