import ActiveObjects
import Foundation

/// A model in a main-actor-by-default module: `nonisolated` opts it out of the module's
/// default, like `ActiveObject` itself, so it can override the hooks and class settings.
public nonisolated final class Note: ActiveObject {
    override public class var tableName: String { "notes" }
    override public class var columnNaming: ColumnNaming { .snakeCase }

    @Column public var title: String = ""
    @Column public var createdAt: Date? = nil
    @JSONColumn public var tags: [String] = []

    /// The hooks called on this object, in order.
    public var events: [String] = []

    public required init() {}

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
    override public var description: String { "Note(\(title))" }
}

/// A model subclass declared `@MainActor`: Swift accepts it (its implicit `init()` must be
/// written `nonisolated`, like the superclass's), but it cannot override the hooks with
/// access to its columns. It stays non-Sendable, so each object lives in one isolation domain.
@MainActor public final class Pinned: ActiveObject {
    @Column public var text: String = ""

    public nonisolated required init() {}
}

/// Code of the module, main-actor isolated by default, using the models.
public func saveNote(_ title: String, tags: [String] = []) throws -> Note {
    let note = Note()
    note.title = title
    note.tags = tags
    try note.save()
    return note
}
