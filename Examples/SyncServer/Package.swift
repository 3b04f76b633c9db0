// swift-tools-version: 6.0
// SyncServer: a sync server for the Notes example, over ActiveObjects' SyncHub (§18), served by
// Hummingbird 2; and notes-device, a command-line notes device that edits and synchronizes.
//
//     swift run -c release --package-path Examples/SyncServer SyncServer --db PATH --tokens PATH [--port N] [--host H]
//
// The hub's database is the file given by --db (or the environment variable SYNC_DB); the
// tokens are read from the file given by --tokens (or SYNC_TOKENS): one `TOKEN USER` pair per
// line, separated by spaces or tabs; blank lines and lines starting with # are skipped; a user
// may have several tokens (one per device). With --port 0 the system picks a free port. The
// server listens on 127.0.0.1 unless --host says otherwise, prints
// `listening on 127.0.0.1:PORT` once it accepts connections, and stops gracefully on SIGTERM
// or SIGINT (the database is closed). Routes:
//
//     POST /sync    Authorization: Bearer TOKEN, the body a SyncEngine's request
//                   → 200 the hub's reply (application/json); 401 missing or unknown token;
//                     400 a request the hub refused; 413 a body over the hub's limit
//     GET  /health  → 200 ok
//
// Every error answer is JSON: `{"error":{"message":"…"}}`.
//
//     swift run -c release --package-path Examples/SyncServer SyncServer dump --db PATH --user USER
//
// prints the notes the hub holds for USER, one canonical line per note sorted by uuid, in the
// format `notes-device --dump` prints a device's notes with (see Sources/NoteRows), so that
// databases can be compared with diff.
//
//     swift run -c release --package-path Examples/SyncServer notes-device --db PATH \
//         --url http://127.0.0.1:PORT/sync --token TOKEN --name NAME --edits N --seed S [--sync-every K]
//     notes-device --db PATH --url URL --token TOKEN [--name NAME] --sync-only
//     notes-device --db PATH --dump
//
// is one notes device: random edits through the Notes models, synchronized every K edits,
// then until nothing is pending (see Sources/NotesDevice/main.swift).
//
// The server and the devices share one model: the `Note` of Examples/Notes, a path dependency.
// Its own package, so that the library keeps no dependencies. `.ci/check-sync` builds it,
// starts the server on a loopback port and runs two devices against it, one killed mid-sync.
import PackageDescription

let package = Package(
    name: "SyncServer",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "SyncServer", targets: ["SyncServer"]),
        .executable(name: "notes-device", targets: ["NotesDevice"]),
    ],
    dependencies: [
        .package(name: "ActiveObjects", path: "../.."),
        .package(name: "Notes", path: "../Notes"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        // Already a dependency of Hummingbird: the server's logger. (Graceful shutdown on SIGTERM
        // is Hummingbird's `runService()`, over swift-service-lifecycle: nothing to import here.)
        .package(url: "https://github.com/apple/swift-log.git", from: "1.0.0"),
    ],
    targets: [
        // The canonical text of note rows, shared by the server's dump and the device's: no
        // Hummingbird, so that notes-device stays a plain ActiveObjects program.
        .target(
            name: "NoteRows",
            dependencies: [.product(name: "ActiveObjects", package: "ActiveObjects")]
        ),
        // The token file, the routes and the application: a library, so that the executable
        // stays a few lines of configuration.
        .target(
            name: "SyncAPI",
            dependencies: [
                .product(name: "ActiveObjects", package: "ActiveObjects"),
                .product(name: "Notes", package: "Notes"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "SyncServer",
            dependencies: [
                "SyncAPI",
                "NoteRows",
                .product(name: "ActiveObjects", package: "ActiveObjects"),
                .product(name: "Notes", package: "Notes"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "NotesDevice",
            dependencies: [
                "NoteRows",
                .product(name: "ActiveObjects", package: "ActiveObjects"),
                .product(name: "Notes", package: "Notes"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
