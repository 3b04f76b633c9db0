// swift-tools-version: 6.0
// Notes: the model and view-model layer of a small SwiftUI notes app, over ActiveObjects.
//
//     swift test --package-path Examples/Notes
//
// The library target builds everywhere (the view model uses the Observation framework, which
// ships with Swift on Linux too); its SwiftUI views compile where SwiftUI exists. An Xcode app
// target adds `@main struct NotesApp: App` and depends on this library.
import PackageDescription

let package = Package(
    name: "Notes",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "Notes", targets: ["Notes"]),
    ],
    dependencies: [
        .package(name: "ActiveObjects", path: "../.."),
    ],
    targets: [
        .target(
            name: "Notes",
            dependencies: [.product(name: "ActiveObjects", package: "ActiveObjects")]
        ),
        .testTarget(
            name: "NotesTests",
            dependencies: ["Notes", .product(name: "ActiveObjects", package: "ActiveObjects")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
