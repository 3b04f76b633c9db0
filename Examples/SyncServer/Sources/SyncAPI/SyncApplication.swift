import ActiveObjects
import Foundation
import Hummingbird
import Logging
import Notes

/// What the server needs to start.
public struct SyncServerConfiguration: Sendable {
    /// The address to listen on: 127.0.0.1 unless told otherwise.
    public var host: String
    /// The port; 0 lets the system choose (the chosen port is printed).
    public var port: Int
    /// The hub's SQLite file (created if missing; its folder must exist).
    public var databasePath: String
    /// The token file (see ``TokenFile``).
    public var tokensPath: String

    /// A configuration; see the properties.
    public init(host: String = "127.0.0.1", port: Int = 8080, databasePath: String, tokensPath: String) {
        self.host = host
        self.port = port
        self.databasePath = databasePath
        self.tokensPath = tokensPath
    }
}

/// Opening the hub's database.
public enum SyncServerDatabase {
    /// Opens (or creates) the hub's database at `path` in WAL mode, with readers beside the
    /// writer and a busy timeout (another process — `SyncServer dump` — may read it meanwhile),
    /// and the hub accepting the Notes models. The hub creates its tables when missing.
    /// - Throws: `DatabaseError` when the file cannot be opened; what `SyncHub.init` throws.
    public static func open(path: String) throws -> (database: Database, hub: SyncHub) {
        var options = Database.Options()
        options.journalMode = .wal
        options.maximumReaderCount = 2
        options.busyTimeout = .seconds(5)
        let database = try Database(path: path, options: options)
        do {
            return (database, try SyncHub(database: database, models: NotesDatabase.synchronizedModels))
        } catch {
            try? database.close()
            throw error
        }
    }
}

/// Builds the application: reads the token file, opens the hub's database, and routes
/// `GET /health` and `POST /sync` (``SyncRoutes``). Every error answer, an unknown route's
/// included, is `{"error":{"message":"…"}}` (``JSONErrorMiddleware``).
///
/// - Parameter onListening: called with the port once the server listens (useful with port 0).
/// - Returns: the application and the hub's database (close it after the application stopped).
/// - Throws: what ``TokenFile/init(path:)`` and ``SyncServerDatabase/open(path:)`` throw.
public func buildApplication(
    _ configuration: SyncServerConfiguration,
    logger: Logger = Logger(label: "SyncServer"),
    onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) throws -> (application: some ApplicationProtocol, database: Database) {
    let tokens = try TokenFile(path: configuration.tokensPath)
    let (database, hub) = try SyncServerDatabase.open(path: configuration.databasePath)

    let router = Router()
    // First, so that it wraps every route and the router's answer to an unknown route.
    router.add(middleware: JSONErrorMiddleware())
    router.get("health") { _, _ in "ok" }
    SyncRoutes(hub: hub, tokens: tokens).add(to: router)

    let application = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "SyncServer"),
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
        logger: logger
    )
    return (application, database)
}

/// Gives every error answer a JSON body, `{"error":{"message":"…"}}` with
/// `Content-Type: application/json` — the format of Hummingbird's `HTTPError` with a message,
/// which ``SyncRoutes`` throws. Hummingbird answers an unknown route with an empty 404, and any
/// other error with an empty 500: this middleware gives them a message. An error that is no
/// `HTTPResponseError` (a database failure) is logged and answered with a 500 that says
/// nothing of the server's internals.
public struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Creates the middleware.
    public init() {}

    /// Runs the rest of the chain and gives its error answers a JSON message.
    /// - Throws: `HTTPError` with a message for every error of `next`.
    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            guard error.body == nil else { throw error }
            throw HTTPError(error.status, headers: error.headers, message: Self.message(for: error.status, request))
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            context.logger.error(
                "Internal server error",
                metadata: ["error": "\(String(reflecting: error))", "request": "\(request.method.rawValue) \(request.uri.path)"]
            )
            throw HTTPError(.internalServerError, message: "Internal server error; the server's log has the details.")
        }
        guard response.status.code >= 400, response.body.contentLength == 0 else { return response }
        var headers = response.headers
        headers[.contentLength] = nil
        headers[.contentType] = nil
        throw HTTPError(response.status, headers: headers, message: Self.message(for: response.status, request))
    }

    static func message(for status: HTTPResponse.Status, _ request: Request) -> String {
        switch status {
        case .notFound: return "No route for \(request.method.rawValue) \(request.uri.path)."
        default: return "\(status.code) \(status.reasonPhrase)."
        }
    }
}
