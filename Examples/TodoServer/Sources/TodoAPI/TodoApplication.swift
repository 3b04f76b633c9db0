import ActiveObjects
import Foundation
import Hummingbird
import Logging

/// What the server needs to start.
public struct TodoServerConfiguration: Sendable {
    /// The loopback port to listen on; 0 lets the system choose (the chosen port is printed).
    public var port: Int
    /// The SQLite file (created if missing; its folder must exist). By default
    /// ``defaultDatabasePath()``: never the current directory, so that running the server from
    /// a clone leaves no database file in the checkout.
    public var databasePath: String
    /// The most reader connections open at once.
    public var readers: Int

    /// A configuration; see the properties.
    public init(port: Int = 8080, databasePath: String = TodoServerConfiguration.defaultDatabasePath(), readers: Int = 4) {
        self.port = port
        self.databasePath = databasePath
        self.readers = readers
    }

    /// Where the database goes when no path is given: `TodoServer/todos.sqlite` in the user's
    /// data folder — `$XDG_DATA_HOME`, else `~/.local/share`, on Linux;
    /// `~/Library/Application Support` on macOS — creating the `TodoServer` folder if needed.
    /// When that folder cannot be had (no home folder, not writable), `todos.sqlite` in the
    /// system's temporary folder (`$TMPDIR`, else `/tmp`) instead.
    public static func defaultDatabasePath() -> String {
        let fileManager = FileManager.default
        if let data = fileManager.urls(for: .applicationSupportDirectory, in: .userDomainMask).first {
            let folder = data.appendingPathComponent("TodoServer", isDirectory: true)
            if (try? fileManager.createDirectory(at: folder, withIntermediateDirectories: true)) != nil,
                fileManager.isWritableFile(atPath: folder.path)
            {
                return folder.appendingPathComponent("todos.sqlite").path
            }
        }
        return fileManager.temporaryDirectory.appendingPathComponent("todos.sqlite").path
    }
}

/// Builds the application: opens and migrates the database, makes it the models' default
/// database, and routes `/health` and `/todos`. It listens on 127.0.0.1 only. Every error
/// answer, an unknown route's included, is `{"error":{"message":"…"}}` (``JSONErrorMiddleware``).
///
/// - Parameter onListening: called with the port once the server listens (useful with port 0).
/// - Returns: the application and its database (close it after the application stopped).
/// - Throws: what ``TodoDatabase/open(path:readers:)`` throws.
public func buildApplication(
    _ configuration: TodoServerConfiguration,
    logger: Logger = Logger(label: "TodoServer"),
    onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) throws -> (application: some ApplicationProtocol, database: Database) {
    let database = try TodoDatabase.open(path: configuration.databasePath, readers: configuration.readers)
    ActiveObject.defaultDatabase = database

    let router = Router()
    // First, so that it wraps every route and the router's answer to an unknown route.
    router.add(middleware: JSONErrorMiddleware())
    router.get("health") { _, _ in "ok" }
    TodoRoutes(database: database).add(to: router.group("todos"))

    let application = Application(
        router: router,
        configuration: .init(address: .hostname("127.0.0.1", port: configuration.port), serverName: "TodoServer"),
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
        logger: logger
    )
    return (application, database)
}
