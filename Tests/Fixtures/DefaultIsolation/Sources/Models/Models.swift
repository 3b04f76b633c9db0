import ActiveObjects
import Foundation

// Models declared in a main-actor-by-default module exactly as anywhere else: no
// `nonisolated`, no `@MainActor`. `ActiveObject` is a `nonisolated` class, and subclasses
// inherit that, so these compile, override the hooks and class settings, and can be used from
// the main actor and from other tasks.

public final class Folder: ActiveObject {
    @Column public var name: String = ""
    public var notes: HasMany<Note> { hasMany(\.$folderId) }
}

public final class Note: ActiveObject {
    override public class var tableName: String { "notes" }
    override public class var columnNaming: ColumnNaming { .snakeCase }

    @Column public var title: String = ""
    @Column public var createdAt: Date? = nil
    @Column(references: Folder.self) public var folderId: Int64? = nil
    @JSONColumn public var tags: [String] = []
    public var folder: BelongsTo<Folder> { belongsTo(\.$folderId) }

    /// The hooks called on this object, in order.
    public var events: [String] = []

    override public func validate() throws {
        events.append("validate")
        if title.isEmpty { throw ValidationError("title", "must not be empty") }
    }
    override public func willSave() throws {
        events.append("willSave")
        if createdAt == nil { createdAt = Date(timeIntervalSince1970: 1_000_000) }
    }
    override public func didSave() { events.append("didSave") }
    override public func willDelete() throws { events.append("willDelete") }
    override public func didDelete() { events.append("didDelete") }
    override public func didLoad() { events.append("didLoad") }
    override public var description: String { "Note(\(title))" }
}

/// Code of the module, main-actor isolated by default, using the models.
public func saveNote(_ title: String, tags: [String] = [], in folder: Folder? = nil) throws -> Note {
    let note = Note()
    note.title = title
    note.tags = tags
    note.folderId = folder?.id
    try note.save()
    return note
}

/// A main-actor view model, as an app writes it.
public final class NotesScreen {
    public private(set) var notes: [Note] = []
    public init() {}

    public func load() async throws {
        notes = try await Note.all.including(\.folder).order(by: \.$title).all()
    }

    /// The folder of a loaded note: no SQL, since `load()` eager-loaded it.
    public func folderName(of note: Note) async throws -> String? {
        try await note.folder.get()?.name
    }

    public func rename(_ note: Note, to title: String) async throws {
        note.title = title
        try await note.save()
    }
}
