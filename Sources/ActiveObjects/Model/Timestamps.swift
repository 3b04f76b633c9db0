import Foundation

/// The clock of the `.createdAt` / `.updatedAt` / `.deletedAt` roles, and the scope that turns
/// automatic timestamps off.
///
/// The scope is a task-local value: `withValue` binds it for the calling task, or, called
/// outside any task, for the calling thread only. So a scope never reaches another thread or
/// a task that did not start inside it, and nested scopes simply restore the outer value.
enum Timestamps {
    /// True inside ``ActiveObject/withoutTimestamps(_:)-(()->R)``.
    @TaskLocal static var areSuspended = false

    /// The current moment as `context` stores it, and that value decoded back: what a row
    /// written now holds, so the object holds exactly what its row holds (a date strategy keeps
    /// milliseconds, or seconds, not the clock's nanoseconds).
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)`` when the date
    ///   strategy cannot write it (never for the built-in strategies and a sane clock).
    static func now(in context: ValueContext, table: String, column: String) throws -> (date: Date, stored: DatabaseValue) {
        let date = Date()
        let stored: DatabaseValue
        do {
            stored = try context.dateStrategy.encode(date)
        } catch {
            throw ActiveObjectError.invalidValue(table: table, column: column, reason: "\(error)")
        }
        return (context.dateStrategy.decode(stored) ?? date, stored)
    }
}

extension ActiveObject {
    /// Runs `body` with automatic timestamps off: saves made inside write the `.createdAt` and
    /// `.updatedAt` columns as the objects hold them (an import keeps the dates it read).
    ///
    /// ```swift
    /// try ActiveObject.withoutTimestamps { try importedPost.save() }
    /// ```
    /// The scope covers the calling thread, or the calling task, only: other threads and tasks
    /// keep stamping while it runs; tasks started inside it (child tasks, `Task { }`) inherit
    /// it, as they inherit every task-local value; `Task.detached` does not. Scopes nest.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public static func withoutTimestamps<R>(_ body: () throws -> R) rethrows -> R {
        try Timestamps.$areSuspended.withValue(true, operation: body)
    }

    /// The async form of ``withoutTimestamps(_:)-(()->R)``: the scope covers the calling task
    /// across its suspensions (`try await post.save()` inside writes the dates as set).
    ///
    /// `isolation` is the caller's, filled in by the compiler: `body` runs there.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public static func withoutTimestamps<R>(isolation: isolated (any Actor)? = #isolation,
                                            _ body: () async throws -> R) async rethrows -> R {
        try await Timestamps.$areSuspended.withValue(true, operation: body, isolation: isolation)
    }
}
