// swift-tools-version: 6.0
// A model module compiled without reflection metadata must be refused with a clear
// `invalidModel` error, never silently mapped to a table without columns.
//
// Built and run by .ci/check-reflection, which copies this folder next to a link named
// ActiveObjects pointing at the repository (so the path below resolves there).
import PackageDescription

let package = Package(
    name: "NoReflectionCheck",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "../ActiveObjects")],
    targets: [
        // The models, compiled without reflection metadata: the runtime describes none of
        // their stored properties (Xcode: "Reflection Metadata Level" = None).
        .target(
            name: "StrippedModels",
            dependencies: [.product(name: "ActiveObjects", package: "ActiveObjects")],
            swiftSettings: [.unsafeFlags(["-disable-reflection-metadata"])]
        ),
        // The same models with reflection metadata (the default): the control.
        .target(
            name: "ReflectedModels",
            dependencies: [.product(name: "ActiveObjects", package: "ActiveObjects")]
        ),
        .executableTarget(
            name: "CheckReflection",
            dependencies: ["StrippedModels", "ReflectedModels",
                           .product(name: "ActiveObjects", package: "ActiveObjects")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
