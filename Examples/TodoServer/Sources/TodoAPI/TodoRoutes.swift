import ActiveObjects
import Foundation
import Hummingbird
import ServiceLifecycle

/// The todo API:
///
/// | method and path            | answer                                                       |
/// |----------------------------|--------------------------------------------------------------|
/// | `GET /todos`               | `{"todos":[…]}`, newest first; `?limit=1…100` (20), `?offset=`, `?done=true|false` |
/// | `GET /todos/:id`           | the todo, or 404                                             |
/// | `POST /todos`              | 201 and the todo; body `{"title":"…","done":false}`          |
/// | `PATCH /todos/:id`         | the changed todo; body with `title` and/or `done`; 404, 422  |
/// | `DELETE /todos/:id`        | 204, or 404                                                  |
/// | `GET /todos/count`         | `{"total":n,"done":m}`                                       |
/// | `GET /todos/count/live`    | server-sent events: one `counts` event now, then one after each commit that changed the table |
///
/// Bad input is a 4xx with a JSON message, never a 500: malformed JSON or query parameters
/// → 400, a todo that does not exist → 404, a title that fails validation → 422. Every error
/// answer, whoever makes it, is `{"error":{"message":"…"}}` with `Content-Type:
/// application/json`: the routes throw `HTTPError`s with a message, ``DatabaseErrorMiddleware``
/// translates the library's errors, and ``JSONErrorMiddleware`` (on the router) gives the rest
/// a message — an unknown route (404), a body over 2 MiB (413), an unexpected error (500).
public struct TodoRoutes<Context: RequestContext>: Sendable {
    /// The database whose commits the live endpoint follows (the models use it as
    /// `ActiveObject.defaultDatabase`).
    public let database: Database

    /// Routes over `database`.
    public init(database: Database) {
        self.database = database
    }

    /// Adds the routes under `group` (e.g. `router.group("todos")`).
    public func add(to group: RouterGroup<Context>) {
        group
            .add(middleware: DatabaseErrorMiddleware())
            .get(use: list)
            .post(use: create)
            .get("count", use: count)
            .get("count/live", use: liveCount)
            .get(":id", use: show)
            .patch(":id", use: update)
            .delete(":id", use: delete)
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> TodoListResponse {
        let page = try ListParameters(request.uri.queryParameters)
        var query = Todo.order(by: \.$id, .descending).limit(page.limit).offset(page.offset)
        if let done = page.done {
            query = query.where(\.$done == done)
        }
        let todos = try await query.all()              // on a reader connection
        return TodoListResponse(todos: try todos.map(TodoResponse.init))
    }

    @Sendable func show(_ request: Request, context: Context) async throws -> TodoResponse {
        let id = try context.parameters.require("id", as: Int64.self)
        guard let todo = try await Todo.find(id: id) else { throw Self.notFound(id) }
        return try TodoResponse(todo)
    }

    @Sendable func create(_ request: Request, context: Context) async throws -> EditedResponse<TodoResponse> {
        let input = try await request.decode(as: NewTodo.self, context: context)
        let todo = Todo()
        todo.title = input.title.trimmingCharacters(in: .whitespacesAndNewlines)
        todo.done = input.done ?? false
        try await todo.save()                          // validates, then INSERTs on the writer
        let response = try TodoResponse(todo)
        return EditedResponse(status: .created, headers: [.location: "/todos/\(response.id)"], response: response)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> TodoResponse {
        let id = try context.parameters.require("id", as: Int64.self)
        let patch = try await request.decode(as: TodoPatch.self, context: context)
        guard patch.title != nil || patch.done != nil else {
            throw HTTPError(.badRequest, message: "Give \"title\" or \"done\" to change.")
        }
        guard let todo = try await Todo.find(id: id) else { throw Self.notFound(id) }
        if let title = patch.title { todo.title = title.trimmingCharacters(in: .whitespacesAndNewlines) }
        if let done = patch.done { todo.done = done }
        try await todo.save()                          // UPDATE of the changed columns only
        return try TodoResponse(todo)
    }

    @Sendable func delete(_ request: Request, context: Context) async throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id", as: Int64.self)
        guard try await Todo.where(\.$id == id).delete() > 0 else { throw Self.notFound(id) }
        return .noContent
    }

    @Sendable func count(_ request: Request, context: Context) async throws -> TodoCounts {
        try await database.read { try TodoCounts.fetch() }    // one snapshot: the counts agree
    }

    /// Server-sent events fed by a live query: the current counts at once, then fresh counts
    /// after every commit that changed the `todo` table. The stream ends when the client goes
    /// away, when the server shuts down gracefully, or when the database closes.
    ///
    /// Each client has its own observation, which runs one count after each commit; a server
    /// with many listeners would share one observation among them instead.
    @Sendable func liveCount(_ request: Request, context: Context) async throws -> Response {
        let encoder = JSONEncoder()
        let events = database.values { try TodoCounts.fetch() }
            .cancelOnGracefulShutdown()
            .map { counts in
                var buffer = ByteBuffer(string: "event: counts\ndata: ")
                buffer.writeBytes(try encoder.encode(counts))
                buffer.writeString("\n\n")
                return buffer
            }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody(asyncSequence: events)
        )
    }

    private static func notFound(_ id: Int64) -> HTTPError {
        HTTPError(.notFound, message: "No todo with id \(id).")
    }
}

/// The query parameters of `GET /todos`, checked: a value that does not parse is a 400.
struct ListParameters {
    static let maximumLimit = 100

    var limit = 20
    var offset = 0
    var done: Bool?

    init(_ parameters: Parameters) throws {
        if let text = parameters.get("limit") {
            guard let value = Int(text), (1...Self.maximumLimit).contains(value) else {
                throw HTTPError(.badRequest, message: "limit must be a whole number from 1 to \(Self.maximumLimit).")
            }
            limit = value
        }
        if let text = parameters.get("offset") {
            guard let value = Int(text), value >= 0 else {
                throw HTTPError(.badRequest, message: "offset must be a whole number, 0 or more.")
            }
            offset = value
        }
        if let text = parameters.get("done") {
            guard let value = Bool(text) else {
                throw HTTPError(.badRequest, message: "done must be true or false.")
            }
            done = value
        }
    }
}
