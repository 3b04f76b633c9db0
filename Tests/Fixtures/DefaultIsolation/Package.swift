// swift-tools-version: 6.2
// Models declared in a module whose default isolation is the main actor (Swift 6.2's
// `-default-isolation MainActor`, Xcode's "Default Actor Isolation" = MainActor) as plain
// `final class Note: ActiveObject { … }` compile, override every hook and class setting, and
// work from the main actor and from other tasks.
//
// Built and run by .ci/check-default-isolation, which copies this folder next to a link named
// ActiveObjects pointing at the repository (so the path below resolves there).
import PackageDescription

let package = Package(
    name: "DefaultIsolationCheck",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "../ActiveObjects")],
    targets: [
        .target(
            name: "Models",
            dependencies: [.product(name: "ActiveObjects", package: "ActiveObjects")],
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),
        .executableTarget(
            name: "CheckDefaultIsolation",
            dependencies: ["Models", .product(name: "ActiveObjects", package: "ActiveObjects")],
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
