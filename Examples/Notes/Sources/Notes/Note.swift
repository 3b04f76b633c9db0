import ActiveObjects
import Foundation

/// A note: one row of the table `note`, synchronized between devices through a server (§18).
///
/// An ordinary ActiveObjects model, not `Sendable` and not isolated to an actor: the
/// `@MainActor` ``NotesViewModel`` holds the notes it shows (its live result's objects, which
/// the live result updates in place on the main actor) and saves them with the async API,
/// whose work runs in the background.
public final class Note: ActiveObject {
    /// The longest title accepted, in characters.
    public static let maximumTitleLength = 120

    /// Columns `created_at` and `updated_at` in SQL; the Swift names stay camelCase.
    public override class var columnNaming: ColumnNaming { .snakeCase }
    /// The table is synchronized by a `SyncEngine`
    /// (``NotesDatabase/syncEngine(database:serverURL:token:)``): every insert, update and delete
    /// is recorded, by triggers, in the transaction that makes it, and pushed to the hub.
    public override class var isSynchronized: Bool { true }
    /// A synchronized model's key is a UUID, made on the device that creates the note: devices
    /// never ask each other for numbers. (`id` stays the local rowid, different on every device.)
    public override class var primaryKey: String { "uuid" }

    /// The note's identity on every device and on the server.
    @Column public var uuid: UUID = UUID()

    /// The title shown in the list; never empty, at most ``maximumTitleLength`` characters.
    @Column public var title: String = ""
    /// The text of the note.
    @Column public var body: String = ""
    /// Pinned notes come first in the list.
    @Column public var pinned: Bool = false
    /// When the note was created: stamped by the library when the note is inserted. (Notes
    /// pulled from another device keep the dates they were written with there.)
    @Column(role: .createdAt) public var createdAt: Date = Date()
    /// When the note was last changed: stamped by the library when the note is inserted and by
    /// every save that writes a change; the list is ordered by it.
    @Column(role: .updatedAt, indexed: true) public var updatedAt: Date = Date()

    /// Refuses an empty or over-long title: `save()` then writes nothing and throws
    /// `ActiveObjectError.validationFailed`.
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
