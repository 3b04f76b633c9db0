import Foundation
import Testing
@testable import ActiveObjects

// Review of issue 24 (API.md §19): each test demonstrates one bug and fails until it is fixed.

final class R24Post: ModelTestRecord {
    override class var tableName: String { "r24_post" }
    @Column var title = ""
    @Column(role: .createdAt) var createdAt: Date? = nil
    @Column(role: .updatedAt) var updatedAt: Date? = nil
    @Column(role: .deletedAt) var deletedAt: Date? = nil
    @Column(role: .lockVersion) var lockVersion: Int = 0
}

/// A legacy table whose integer key is a declared column (ormapper's `contactid`).
final class R24Contact: ModelTestRecord {
    override class var tableName: String { "r24_contact" }
    override class var primaryKey: String { "contactid" }
    @Column var contactid: Int64? = nil
    @Column var name = ""
}

/// A table another tool writes to: `createdAt` gets `CURRENT_TIMESTAMP` from SQLite.
final class R24Legacy: ModelTestRecord {
    override class var tableName: String { "r24_legacy" }
    @Column var name = ""
    @Column(role: .createdAt) var createdAt = Date()
}

/// A natural key, for upserts.
final class R24Tag: ModelTestRecord {
    override class var tableName: String { "r24_tag" }
    override class var primaryKey: String { "label" }
    @Column var label = ""
    @Column var uses = 0
    @Column(role: .createdAt) var createdAt: Date? = nil
    @Column(role: .updatedAt) var updatedAt: Date? = nil
}

/// A table whose `id` is `INT PRIMARY KEY`: a real column, not SQLite's rowid.
final class R24Item: ModelTestRecord {
    override class var tableName: String { "r24_item" }
    @Column var name = ""
}

/// "Today": a default computed at run time that stays equal for a day.
final class R24Day: ModelTestRecord {
    override class var tableName: String { "r24_day" }
    @Column var note = ""
    @Column var day = Calendar(identifier: .gregorian).startOfDay(for: Date())
}

/// `r24_note` without its `extra` column: a rebuild.
final class R24Note: ModelTestRecord {
    override class var tableName: String { "r24_note" }
    @Column var body = ""
}

@Suite struct Issue24ReviewTests {
    let past = Date(timeIntervalSince1970: 1_000_000_000)

    // API.md §19: "The object holds the values written" and a save of a loaded object checks
    // the version the object holds. `save()` of an object whose `id` was set by hand runs
    // `saveWholeRowSQL` (INSERT … ON CONFLICT DO UPDATE, which keeps the row's createdAt and
    // counts lockVersion + 1), but the plan is `.insertWithID` with no returned role columns:
    // the object keeps the createdAt it stamped and version 0, and its next save is refused
    // as stale although nobody else wrote.
    @Test func handSetIDSaveLeavesTheObjectWithOtherRolesThanTheRow() throws {
        try withFileModelDB { db in
            try R24Post.createTable()
            let post = R24Post(); post.title = "first"; try post.save()
            try post.save()
            post.title = "second"; try post.save()          // version 1
            try db.execute("UPDATE r24_post SET createdAt = ?", [past])
            let copy = R24Post()
            copy.id = post.id
            copy.title = "replaced"
            try copy.save()                                   // the row with that id, every column
            let row = try #require(try R24Post.find(id: post.id!))
            if copy.createdAt != row.createdAt {
                Issue.record("object createdAt \(String(describing: copy.createdAt)) != row's \(String(describing: row.createdAt))")
            }
            if copy.lockVersion != row.lockVersion {
                Issue.record("object lockVersion \(copy.lockVersion) != row's \(row.lockVersion)")
            }
            copy.title = "again"
            do { try copy.save() } catch { Issue.record("a fresh save was refused: \(error)") }
        }
    }

    // API.md §19: ".updatedAt: set on insert and on every save that writes a change"; a save
    // "increments" the version. `update()` of an object whose `id` was set by hand writes every
    // column (planWrite .update, slots = all), and `updateStamps` skips `.updatedAt` because it
    // is among the "changed" slots: the row gets updatedAt NULL, createdAt NULL (its creation
    // date lost) and lockVersion 0 (the version goes backwards, so a stale copy loaded at 0 can
    // save again).
    @Test func handSetIDUpdateWipesTheDatesAndMovesTheVersionBack() throws {
        try withFileModelDB { _ in
            try R24Post.createTable()
            let post = R24Post(); post.title = "first"; try post.save()
            let stale = try #require(try R24Post.find(id: post.id!))   // version 0
            post.title = "second"; try post.save()                       // version 1
            let copy = R24Post()
            copy.id = post.id
            copy.title = "by hand"
            try copy.update()
            let row = try #require(try R24Post.find(id: post.id!))
            if row.createdAt == nil { Issue.record("update() wiped the row's createdAt") }
            if row.updatedAt == nil { Issue.record("update() wrote a change but left updatedAt NULL") }
            if row.lockVersion <= 1 { Issue.record("update() moved lockVersion from 1 to \(row.lockVersion)") }
            stale.title = "stale"
            do {
                try stale.save()
                Issue.record("a copy loaded at version 0 saved over two later writes")
            } catch ActiveObjectError.staleObject {
            }
        }
    }

    // ARCHITECTURE/SchemaPlan: "AUTOINCREMENT's high-water mark … the new table takes the higher
    // of both"; the brief: a rebuild must not lose AUTOINCREMENT state. SchemaPlanner keeps
    // AUTOINCREMENT only for `.rowID` keys (SchemaPlan.swift rebuildPlan), so a model whose
    // integer key is a declared `@Column` (`primaryKey = "contactid"`) loses it: after the
    // rebuild a deleted row's id is handed out again.
    @Test func rebuildLosesAutoincrementOfADeclaredIntegerKey() throws {
        try withFileModelDB { db in
            try db.execute("CREATE TABLE r24_contact (contactid INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL DEFAULT '', extra TEXT)")
            for name in ["a", "b", "c"] { try db.execute("INSERT INTO r24_contact (name) VALUES (?)", [name]) }
            try db.execute("DELETE FROM r24_contact WHERE contactid = 3")
            try R24Contact.migrate(rebuildingTable: true)                 // drops `extra`
            let sql: String = try db.scalar("SELECT sql FROM sqlite_master WHERE name = 'r24_contact'") ?? ""
            if !sql.uppercased().contains("AUTOINCREMENT") { Issue.record("AUTOINCREMENT dropped: \(sql)") }
            let next = R24Contact(); next.name = "d"; try next.save()
            if next.contactid == 3 { Issue.record("the id of a deleted row (3) was reused after the rebuild") }
        }
    }

    // API.md §19: a run-time default must not be *frozen* into SQL DEFAULT; `DEFAULT
    // CURRENT_TIMESTAMP` is not frozen (SQLite computes it per insert) and the generator maps
    // exactly such columns to `.createdAt`. TableShape.needsRebuild treats any DEFAULT of a
    // run-time-default column as frozen, so `migrate(rebuildingTable: true)` rebuilds an
    // up-to-date table just to drop CURRENT_TIMESTAMP, after which another tool's insert that
    // relied on it fails (NOT NULL).
    @Test func rebuildDropsACurrentTimestampDefaultThatIsNotFrozen() throws {
        try withFileModelDB { db in
            try db.execute("CREATE TABLE r24_legacy (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', createdAt TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)")
            try db.execute("INSERT INTO r24_legacy (name) VALUES ('before')")
            let plan = try R24Legacy.schemaPlan(rebuildingTable: true)
            if !plan.isEmpty { Issue.record("an up-to-date table is rebuilt: \(plan.first ?? "")") }
            try R24Legacy.migrate(rebuildingTable: true)
            do {
                try db.execute("INSERT INTO r24_legacy (name) VALUES ('other tool')")
            } catch {
                Issue.record("another tool's insert fails after the rebuild: \(error)")
            }
        }
    }

    // API.md §19 / Timestamps.swift: inside `withoutTimestamps { }` "saves made inside write the
    // .createdAt and .updatedAt columns as the objects hold them (an import keeps the dates it
    // read)". An upsert that meets an existing row never writes `.createdAt` (ModelSQL
    // `assignment` skips it unconditionally) and the object takes the row's date back: an
    // import by upsert loses the imported creation date.
    @Test func upsertInsideWithoutTimestampsDropsTheImportedCreationDate() throws {
        try withFileModelDB { _ in
            try R24Tag.createTable()
            let local = R24Tag(); local.label = "swift"; try local.save()
            let imported = R24Tag()
            imported.label = "swift"; imported.uses = 7
            imported.createdAt = past; imported.updatedAt = past
            try ActiveObject.withoutTimestamps { try imported.upsert() }
            let row = try #require(try R24Tag.find(key: "swift"))
            if row.createdAt != past { Issue.record("createdAt written as \(String(describing: row.createdAt)), not the imported \(past)") }
            if imported.createdAt != past { Issue.record("the object's createdAt was replaced by \(String(describing: imported.createdAt))") }
        }
    }

    // "No row is ever lost silently: the rebuild either copies every row or changes nothing"
    // (migrate(rebuildingTable:)). For a rowid model whose table's `id` is a real column and not
    // the rowid (`id INT PRIMARY KEY`, a classic legacy table), SchemaPlanner.rebuildPlan copies
    // `rowid` into the new `"id" INTEGER PRIMARY KEY`: every row's id is replaced by its rowid.
    @Test func rebuildReplacesARealIdColumnByTheRowid() throws {
        try withFileModelDB { db in
            try db.execute("CREATE TABLE r24_item (id INT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', extra TEXT)")
            try db.execute("INSERT INTO r24_item (id, name) VALUES (100, 'a'), (200, 'b')")
            #expect(try R24Item.find(id: 100)?.name == "a")
            try R24Item.migrate(rebuildingTable: true)                    // drops `extra`
            let ids: [Int64] = try db.rows("SELECT id FROM r24_item ORDER BY id").map { try $0["id"] }
            if ids != [100, 200] { Issue.record("the rebuild changed the ids [100, 200] into \(ids)") }
        }
    }

    // API.md §19: "A default computed at run time … is never frozen into the table's SQL
    // DEFAULT". RuntimeDefaults only recognises a default that differs between two objects
    // made a moment apart, or a date within 600 s of now: "today" (start of day) passes neither
    // test and is frozen, so a row another tool inserts tomorrow gets today's date.
    // (The same holds, depending on timing, for `Date() + 1 day` with a seconds strategy.)
    @Test func aStartOfDayDefaultIsFrozenIntoTheTable() throws {
        let today = Calendar(identifier: .gregorian).startOfDay(for: Date())
        guard Date().timeIntervalSince(today) > 700 else { return }       // the 600 s window would catch it
        try withFileModelDB { db in
            try R24Day.createTable()
            let sql: String = try db.scalar("SELECT sql FROM sqlite_master WHERE name = 'r24_day'") ?? ""
            if sql.contains("\"day\" TEXT NOT NULL DEFAULT") { Issue.record("today's date frozen as DEFAULT: \(sql)") }
        }
    }

    // API.md §19 / DocC "Writing the dates as they are": the scope "covers the calling thread,
    // or the calling task". The body of `await db.transaction { }` is the calling task's work,
    // written inside the scope, but Database.perform runs it on the writer's own thread
    // (BackgroundJob.run) where the task-local `Timestamps.areSuspended` is not bound: the saves
    // in it are stamped, the imported dates are lost.
    @Test func theScopeDoesNotReachTheBodyOfAnAsyncTransaction() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("models.sqlite"))
        defer { try? db.close() }
        let past = self.past
        try await ModelTestDB.$current.withValue(db) {
            try R24Post.createTable()
            try await ActiveObject.withoutTimestamps {
                try await db.transaction {
                    let post = R24Post()
                    post.title = "imported"; post.createdAt = past; post.updatedAt = past
                    try post.save()
                }
            }
            let row = try #require(try await R24Post.findAll().first)
            if row.createdAt != past || row.updatedAt != past {
                Issue.record("stamped inside withoutTimestamps: createdAt \(String(describing: row.createdAt)), updatedAt \(String(describing: row.updatedAt))")
            }
        }
    }

    // API.md §19: a save of a loaded object "checks that the row still has the version the
    // object was loaded with … If the row changed … since, nothing is written … staleObject".
    // A live result (§17) updates an object in place when its row changes, keeping the user's
    // unsaved columns but taking the row's new `.lockVersion`: the stale edit then saves over
    // the other writer's value of the same column without a staleObject error.
    @Test func aLiveResultTurnsAStaleEditIntoAFreshOne() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("models.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try R24Post.createTable()
            let post = R24Post(); post.title = "original"; try await post.save()
            let id = try requireID(post)
            try await withTimeout(30) {
                var changes = R24Post.all.changes().makeAsyncIterator()
                let first = try #require(try await changes.next(isolation: #isolation))
                let mine = first.elements[0]
                mine.title = "mine"                                   // unsaved, loaded at version 0
                let theirs = try #require(try await R24Post.find(id: id))
                theirs.title = "theirs"
                try await theirs.save()                               // version 1
                let second = try #require(try await changes.next(isolation: #isolation))
                #expect(second.elements.first === mine)
                do {
                    try await mine.save()
                    let row = try #require(try await R24Post.find(id: id))
                    Issue.record("the stale edit was saved: the row's title is \(row.title), \"theirs\" silently lost")
                } catch ActiveObjectError.staleObject {
                }
            }
        }
    }

    // migrate(rebuildingTable:) checks that each view mentioning the table still works and
    // otherwise throws, "nothing was changed" (SchemaChange.execute) — as SQLite's own ALTER
    // TABLE DROP COLUMN refuses to break a trigger. Triggers get no such check: a trigger that
    // names a dropped column is recreated as it was, the rebuild commits, and from then on
    // every write to the table fails ("no such column").
    @Test func aRebuildLeavesATriggerThatNamesADroppedColumnBroken() throws {
        try withFileModelDB { db in
            try db.execute("CREATE TABLE r24_note (id INTEGER PRIMARY KEY, body TEXT NOT NULL DEFAULT '', extra TEXT)")
            try db.execute("CREATE TABLE r24_note_log (what TEXT)")
            try db.execute("CREATE TRIGGER r24_note_logged AFTER UPDATE ON r24_note BEGIN INSERT INTO r24_note_log VALUES (NEW.extra); END")
            try db.execute("INSERT INTO r24_note (body, extra) VALUES ('a', 'x')")
            do {
                try R24Note.migrate(rebuildingTable: true)                 // drops `extra`
            } catch {
                return                                                       // refused: fine
            }
            let note = try #require(try R24Note.findAll().first)
            note.body = "b"
            do { try note.save() } catch { Issue.record("the rebuild committed, and now every update fails: \(error)") }
        }
    }
}
