import ActiveObjects
import Foundation
import Hummingbird

/// A todo as the API sends it.
public struct TodoResponse: ResponseCodable, Equatable, Sendable {
    /// The row's id.
    public var id: Int64
    /// What to do.
    public var title: String
    /// Whether it is done.
    public var done: Bool
    /// ISO 8601, UTC, with milliseconds.
    public var createdAt: String
    /// ISO 8601, UTC, with milliseconds.
    public var updatedAt: String

    /// The JSON form of a stored todo.
    /// - Throws: `HTTPError` 500 if the todo has no row (never the case for a fetched or saved one).
    public init(_ todo: Todo) throws {
        guard let id = todo.id else { throw HTTPError(.internalServerError, message: "todo has no id") }
        self.id = id
        title = todo.title
        done = todo.done
        createdAt = Self.text(todo.createdAt)
        updatedAt = Self.text(todo.updatedAt)
    }

    /// The date as stored: the database keeps milliseconds (rounded to nearest), while a
    /// `Date` may hold nanoseconds. Rounding here makes the answer to `POST` show what a later
    /// `GET` shows, whatever the object holds.
    private static func text(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        return Date(timeIntervalSince1970: milliseconds / 1000).formatted(dateStyle)
    }

    private static let dateStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}

/// A page of todos, newest first.
public struct TodoListResponse: ResponseCodable, Sendable {
    /// The todos of the page.
    public var todos: [TodoResponse]
}

/// How many todos there are, and how many are done (read in one snapshot, so they agree).
public struct TodoCounts: ResponseCodable, Equatable, Sendable {
    /// All todos.
    public var total: Int
    /// The todos that are done.
    public var done: Int

    /// Reads both counts; call it inside `db.read { }` or `db.values { }` so they agree.
    /// - Throws: what the counts throw (`DatabaseError`, `ActiveObjectError`).
    public static func fetch() throws -> TodoCounts {
        TodoCounts(total: try Todo.countAll(), done: try Todo.where(\.$done == true).count())
    }
}

/// The body of `POST /todos`.
public struct NewTodo: Codable, Sendable {
    /// What to do (trimmed; must not be empty).
    public var title: String
    /// Whether it is already done; false when absent.
    public var done: Bool?
}

/// The body of `PATCH /todos/:id`: the fields to change.
public struct TodoPatch: Codable, Sendable {
    /// A new title, or nil to keep it.
    public var title: String?
    /// A new state, or nil to keep it.
    public var done: Bool?
}
