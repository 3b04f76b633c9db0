import ActiveObjects
import Hummingbird
import Logging

/// What the server needs to start.
public struct TodoServerConfiguration: Sendable {
    /// The loopback port to listen on; 0 lets the system choose (the chosen port is printed).
    public var port: Int
    /// The SQLite file (created if missing).
    public var databasePath: String
    /// The most reader connections open at once.
    public var readers: Int

    /// A configuration; see the properties.
    public init(port: Int = 8080, databasePath: String = "todos.sqlite", readers: Int = 4) {
        self.port = port
        self.databasePath = databasePath
        self.readers = readers
    }
}

/// Builds the application: opens and migrates the database, makes it the models' default
/// database, and routes `/health` and `/todos`. It listens on 127.0.0.1 only.
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
