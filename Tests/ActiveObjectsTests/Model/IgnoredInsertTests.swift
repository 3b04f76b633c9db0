import Foundation
import Testing
@testable import ActiveObjects

final class IgnoredUser: ModelTestRecord {
    override class var tableName: String { "ignored_user" }
    @Column var email = ""
    @Column var name = ""
}

final class IgnoredOther: ModelTestRecord {
    override class var tableName: String { "ignored_other" }
    @Column var label = ""
}

/// An INSERT that SQLite ignores inserted nothing (API §15): `save()`/`insert()`/`upsert()`
/// throw `notInserted` and leave the object new; `insertAll` writes nothing. Without it the
/// object took `last_insert_rowid`'s stale value — another row's id, even another table's —
/// and its next `save()` overwrote that row.
@Suite struct IgnoredInsertTests {
    /// A file database (default options) whose `ignored_user.email` ignores duplicates, and a
    /// trigger that ignores users named "skip".
    static func withDatabase(_ body: (Database) throws -> Void) throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("ignored.sqlite"))
        defer { try? db.close() }
        try db.execute("CREATE TABLE ignored_user (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE ON CONFLICT IGNORE, name TEXT NOT NULL DEFAULT '')")
        try db.execute("CREATE TABLE ignored_other (id INTEGER PRIMARY KEY, label TEXT NOT NULL DEFAULT '')")
        try db.execute("CREATE TRIGGER ignore_skip BEFORE INSERT ON ignored_user WHEN NEW.name = 'skip' BEGIN SELECT RAISE(IGNORE); END")
        try ModelTestDB.$current.withValue(db) { try body(db) }
    }

    static func user(_ email: String, _ name: String = "") -> IgnoredUser {
        let user = IgnoredUser()
        user.email = email
        user.name = name
        return user
    }

    @Test func aDuplicateIgnoredByAConflictClauseLeavesTheObjectNewAndTouchesNoOtherRow() throws {
        try Self.withDatabase { db in
            let ann = Self.user("ann@example.com", "Ann")
            try ann.save()
            // Other tables' inserts move last_insert_rowid past the user's.
            for label in ["a", "b", "c"] {
                let other = IgnoredOther()
                other.label = label
                try other.save()
            }
            let dup = Self.user("ann@example.com", "Impostor")
            #expect(throws: ActiveObjectError.notInserted(table: "ignored_user")) { try dup.save() }
            #expect(dup.id == nil)
            #expect(dup.hasChanges)
            // A later save of the object cannot touch another row: it inserts again (and is
            // ignored again while the email is taken), then succeeds with a free email.
            #expect(throws: ActiveObjectError.notInserted(table: "ignored_user")) { try dup.save() }
            dup.email = "other@example.com"
            try dup.save()
            #expect(dup.id == 2)
            #expect(try IgnoredOther.all.order(by: \.$id).pluck(\.$label) == ["a", "b", "c"])
            #expect(try IgnoredUser.find(id: ann.id!)?.name == "Ann")
            #expect(try IgnoredUser.countAll() == 2)
            #expect(try db.scalar("SELECT count(*) FROM ignored_other WHERE label = 'Impostor'") as Int? == 0)
        }
    }

    @Test func aRowIgnoredByATriggerIsNotInsertedByAnyForm() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("ignored.sqlite"))
        defer { try? db.close() }
        try synchronously {
            try db.execute("CREATE TABLE ignored_user (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE ON CONFLICT IGNORE, name TEXT NOT NULL DEFAULT '')")
            try db.execute("CREATE TRIGGER ignore_skip BEFORE INSERT ON ignored_user WHEN NEW.name = 'skip' BEGIN SELECT RAISE(IGNORE); END")
        }
        try await ModelTestDB.$current.withValue(db) {
            let kept = Self.user("kept@example.com")
            try synchronously { try kept.insert() }
            let skipped = Self.user("skip@example.com", "skip")
            #expect(throws: ActiveObjectError.notInserted(table: "ignored_user")) { try synchronously { try skipped.insert() } }
            #expect(skipped.id == nil)
            #expect(throws: ActiveObjectError.notInserted(table: "ignored_user")) { try synchronously { try skipped.upsert() } }
            #expect(skipped.id == nil)
            await #expect(throws: ActiveObjectError.notInserted(table: "ignored_user")) { try await skipped.save() }
            #expect(skipped.id == nil)
            // An id set by hand: the row with that id is neither written nor taken.
            skipped.id = kept.id
            #expect(throws: ActiveObjectError.notInserted(table: "ignored_user")) { try synchronously { try skipped.save() } }
            #expect(try await IgnoredUser.find(id: kept.id!)?.email == "kept@example.com")
            #expect(try await IgnoredUser.countAll() == 1)
        }
    }

    @Test func insertAllWithAnIgnoredRowWritesNothing() async throws {
        try Self.withDatabase { db in
            try Self.user("taken@example.com").save()
            let batch = (0..<5).map { Self.user("u\($0)@example.com") } + [Self.user("taken@example.com")]
            #expect(throws: ActiveObjectError.notInserted(table: "ignored_user")) { try IgnoredUser.insertAll(batch) }
            #expect(batch.allSatisfy { $0.id == nil })
            #expect(try IgnoredUser.countAll() == 1)
            let skipped = (0..<3).map { Self.user("s\($0)@example.com", $0 == 1 ? "skip" : "") }
            #expect(throws: ActiveObjectError.notInserted(table: "ignored_user")) { try IgnoredUser.insertAll(skipped) }
            #expect(try IgnoredUser.countAll() == 1)
        }
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("async.sqlite"))
        defer { try? db.close() }
        try synchronously {
            try db.execute("CREATE TABLE ignored_user (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE ON CONFLICT IGNORE, name TEXT NOT NULL DEFAULT '')")
        }
        try await ModelTestDB.$current.withValue(db) {
            try await Self.user("taken@example.com").save()
            let batch = [Self.user("new@example.com"), Self.user("taken@example.com")]
            await #expect(throws: ActiveObjectError.notInserted(table: "ignored_user")) { try await IgnoredUser.insertAll(batch) }
            #expect(batch.allSatisfy { $0.id == nil })
            #expect(try await IgnoredUser.countAll() == 1)
        }
    }

    /// A view whose INSTEAD OF trigger inserts elsewhere (or nothing): the view holds no new row,
    /// so the object gets no id.
    @Test func anInsertIntoAViewWithAnInsteadOfTriggerIsNotInsertedThere() throws {
        try Self.withDatabase { db in
            try db.execute("CREATE VIEW ignored_user_view AS SELECT id, email, name FROM ignored_user")
            try db.execute("""
                CREATE TRIGGER into_view INSTEAD OF INSERT ON ignored_user_view
                BEGIN INSERT OR IGNORE INTO ignored_other(label) VALUES (NEW.email); END
                """)
            let other = IgnoredOther()
            other.label = "before"
            try other.save()
            let viewed = ViewedUser()
            viewed.email = "view@example.com"
            #expect(throws: ActiveObjectError.notInserted(table: "ignored_user_view")) { try viewed.save() }
            #expect(viewed.id == nil)
            #expect(try IgnoredOther.find(id: other.id!)?.label == "before")
        }
    }
}

final class ViewedUser: ModelTestRecord {
    override class var tableName: String { "ignored_user_view" }
    @Column var email = ""
    @Column var name = ""
}
