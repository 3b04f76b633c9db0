import ActiveObjects
import Foundation

/// A todo item: one row of the table `todo`.
///
/// An ordinary, non-`Sendable` ActiveObjects model: a request handler fetches its own objects
/// (the async finders return them as `sending` values), changes them and saves them, all in the
/// handler's task.
public final class Todo: ActiveObject {
    /// The longest title accepted, in characters.
    public static let maximumTitleLength = 200

    /// Columns `created_at` and `updated_at` in SQL; the Swift names stay camelCase.
    public override class var columnNaming: ColumnNaming { .snakeCase }

    /// What to do; never empty, at most ``maximumTitleLength`` characters.
    @Column public var title: String = ""
    /// Whether it is done.
    @Column(indexed: true) public var done: Bool = false
    /// When it was created: stamped by the library when the todo is inserted.
    @Column(role: .createdAt) public var createdAt: Date = Date()
    /// When it was last changed: stamped by the library when the todo is inserted and by every
    /// save that writes a change (a `PATCH` that changes nothing leaves it).
    @Column(role: .updatedAt) public var updatedAt: Date = Date()

    /// Refuses an empty or over-long title; `save()` then writes nothing and throws
    /// `ActiveObjectError.validationFailed`, which the API answers with 422.
    /// - Throws: `ValidationError` naming the `title` field.
    public override func validate() throws {
        if title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw ValidationError("title", "must not be empty")
        }
        if title.count > Self.maximumTitleLength {
            throw ValidationError("title", "must be at most \(Self.maximumTitleLength) characters")
        }
    }
}
