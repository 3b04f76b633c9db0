import Foundation
import Testing
@testable import ActiveObjects

// Models whose init() uses a class whose schema is being built (item 2 of the hardening
// issue). Before the re-entry guard, each of these recursed until the stack overflowed.

/// Describes itself while it is created: `description` needs the schema being built.
final class ReentryDescribing: ModelTestRecord {
    @Column var name = "initial"
    var describedAtInit = ""

    required init() {
        super.init()
        describedAtInit = description
    }
}

/// A stored property initialised by a query of its own class.
final class ReentrySelfCounting: ModelTestRecord {
    @Column var name = ""
    var countAtInit: Int = (try? ReentrySelfCounting.countAll()) ?? -1
}

/// A stored property initialised by a query of another model (which queries back).
final class ReentryTag: ModelTestRecord {
    @Column var label = ""
    var ownersAtInit: Int = (try? ReentryOwner.countAll()) ?? -1
}

final class ReentryOwner: ModelTestRecord {
    @Column var name = ""
    var firstTag: ReentryTag? = (try? ReentryTag.all.order(by: \.$label).first()) ?? nil
    @Column var rank = 0
}

/// Whose `tableName` uses the class itself.
final class ReentryTableName: ModelTestRecord {
    @Column var name = ""
    override class var tableName: String {
        (try? ModelSchema.of(ReentryTableName.self)).map { _ in "never" } ?? "reentry_table_name"
    }
}

/// The per-class schema: slots, the SQL built once, the registry and its re-entry guard.
@Suite struct ModelSchemaTests {
    final class Track: ModelTestRecord {
        override class var columnNaming: ColumnNaming { .snakeCase }
        @Column var title = ""
        @Column("plays") var playCount = 0
        @Column var lastPlayed: Date? = nil
        @JSONColumn var tags: [String] = []
        var scratch = 0
    }

    final class Keyed: ModelTestRecord {
        override class var primaryKey: String { "keyid" }
        override class var tableName: String { "keyed rows" }
        @Column var name = ""
    }

    final class Empty: ModelTestRecord {}

    // MARK: Slots and names

    @Test func columnsAreInDeclarationOrderWithTheirNamesAndSlots() throws {
        let schema = try ModelSchema.of(Track.self)
        #expect(schema.tableName == "track")
        #expect(schema.columns.map(\.propertyName) == ["title", "playCount", "lastPlayed", "tags"])
        #expect(schema.columns.map(\.name) == ["title", "plays", "last_played", "tags"])
        #expect(schema.columns.map(\.quotedName) == [#""title""#, #""plays""#, #""last_played""#, #""tags""#])
        #expect(schema.accessors.count == 4)
        #expect(schema.canonicalSteps.map(\.slot) == [0, 1, 2, 3])
        #expect(schema.canonicalSteps.map(\.column) == [1, 2, 3, 4])
        // `\.$column` key paths give each column's place in the object, which names its slot.
        let prototype = try #require(schema.prototype as? Track)
        let positions = [prototype.$title.position, prototype.$playCount.position,
                         prototype.$lastPlayed.position, prototype.$tags.position]
        #expect(positions == schema.accessors.map(\.valueOffset))
    }

    @Test func slotsAreFoundByPropertyNameColumnNameAndKeyPath() throws {
        let schema = try ModelSchema.of(Track.self)
        #expect(try schema.slot(forKey: "playCount") == 1)
        #expect(try schema.slot(forKey: "plays") == 1)
        #expect(try schema.slot(forKey: "last_played") == 2)
        #expect(try schema.slot(forKey: "id") == -1)
        #expect(try schema.slot(for: \Track.$lastPlayed) == 2)
        #expect(try schema.slot(for: \Track.$tags) == 3)
        #expect(try schema.quotedColumn(forKey: "id") == #""id""#)
        #expect(try schema.quotedColumn(forKey: "playCount") == #""plays""#)

        let unknown = expectActiveObjectError { _ = try schema.slot(forKey: "scratch") }
        guard case .unknownColumn(table: "track", column: "scratch")? = unknown else {
            Issue.record("expected unknownColumn, got \(String(describing: unknown))")
            return
        }
        let notAColumn = expectActiveObjectError { _ = try schema.slot(for: \Track.scratch) }
        guard case .invalidArgument? = notAColumn else {
            Issue.record("expected invalidArgument, got \(String(describing: notAColumn))")
            return
        }
    }

    @Test func aCustomPrimaryKeyIsSlotMinusOneUnderBothNames() throws {
        let schema = try ModelSchema.of(Keyed.self)
        #expect(try schema.slot(forKey: "keyid") == -1)
        #expect(try schema.slot(forKey: "id") == -1)
        #expect(schema.quotedTable == #""keyed rows""#)
        #expect(schema.quotedPrimaryKey == #""keyid""#)
    }

    // MARK: SQL

    @Test func theSQLIsBuiltOnceFromTheColumns() throws {
        let schema = try ModelSchema.of(Track.self)
        #expect(schema.selectList == #""id", "title", "plays", "last_played", "tags""#)
        #expect(schema.selectSQL == #"SELECT "id", "title", "plays", "last_played", "tags" FROM "track""#)
        #expect(schema.declaredSQL.findByKeySQL.sql == #"SELECT "id", "title", "plays", "last_played", "tags" FROM "track" WHERE "id" = ?"#)
        #expect(schema.declaredSQL.insertSQL.sql == #"INSERT INTO "track" ("title", "plays", "last_played", "tags") VALUES (?, ?, ?, ?)"#)
        #expect(schema.declaredSQL.insertWithIDSQL?.sql == #"INSERT INTO "track" ("id", "title", "plays", "last_played", "tags") VALUES (?, ?, ?, ?, ?)"#)
        #expect(schema.declaredSQL.upsertSQL.sql.hasSuffix(#"ON CONFLICT DO UPDATE SET "title" = excluded."title", "plays" = excluded."plays", "last_played" = excluded."last_played", "tags" = excluded."tags" RETURNING "id""#))
        #expect(schema.declaredSQL.saveWholeRowSQL?.sql.contains(#"ON CONFLICT("id") DO UPDATE SET"#) == true)
        #expect(schema.declaredSQL.deleteSQL.sql == #"DELETE FROM "track" WHERE "id" = ?"#)
        #expect(schema.declaredSQL.existsSQL.sql == #"SELECT 1 FROM "track" WHERE "id" = ?"#)
    }

    @Test func aModelWithoutColumnsInsertsDefaultValues() throws {
        let schema = try ModelSchema.of(Empty.self)
        #expect(schema.columns.isEmpty)
        #expect(schema.declaredSQL.insertSQL.sql == #"INSERT INTO "empty" DEFAULT VALUES"#)
        #expect(schema.declaredSQL.upsertSQL.sql.contains(#"ON CONFLICT DO UPDATE SET "id" = excluded."id""#))
    }

    @Test func updateStatementsAreCachedPerSetOfSlots() throws {
        let schema = try ModelSchema.of(Track.self)
        let first = schema.declaredSQL.updateSQL(slots: [0, 2])
        #expect(first.sql == #"UPDATE "track" SET "title" = ?, "last_played" = ? WHERE "id" = ?"#)
        #expect(schema.declaredSQL.updateSQL(slots: [0, 2]) === first)
        #expect(schema.declaredSQL.updateSQL(slots: [2, 0]) !== first)
    }

    @Test func theValueContextFollowsTheModelThenTheDatabase() throws {
        final class Legacy: ModelTestRecord {
            override class var dateStrategy: DateStrategy? { .unixSeconds }
            @Column var at: Date? = nil
        }
        var options = Database.Options()
        options.dateStrategy = .compactText
        let database = try Database.inMemory(options: options)
        #expect(try ModelSchema.of(Legacy.self).context(in: database).dateStrategy == .unixSeconds)
        #expect(try ModelSchema.of(Track.self).context(in: database).dateStrategy == .compactText)
    }

    // MARK: Registry

    @Test func theSchemaIsBuiltOnceAndShared() throws {
        let first = try ModelSchema.of(Track.self)
        let fromAnotherThread = Locked<ModelSchema?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            fromAnotherThread.withLock { $0 = try? ModelSchema.of(Track.self) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(fromAnotherThread.current === first)
        #expect(try ModelSchema.of(Track.self) === first)
    }

    @Test func theBaseClassIsNotAModel() {
        let error = expectActiveObjectError { _ = try ModelSchema.of(ActiveObject.self) }
        #expect(error?.isInvalidModel == true)
    }

    @Test func newObjectsAreOrdinaryObjectsOfTheModel() throws {
        let schema = try ModelSchema.of(Track.self)
        let object = schema.newObject()
        #expect(object is Track)
        #expect(object !== schema.prototype)
        #expect(object.edits == nil && object.assignmentBookkeeping == 0, "a new object tracks nothing")
    }

    // MARK: Re-entrant builds

    @Test func aModelWhoseInitDescribesItselfIsBuiltWithoutRecursion() throws {
        try withModelDB { _ in
            let schema = try ModelSchema.of(ReentryDescribing.self)
            #expect(schema.columns.map(\.name) == ["name"])
            // The prototype described itself before its schema existed: the short form.
            #expect((schema.prototype as? ReentryDescribing)?.describedAtInit == "ReentryDescribing(id: nil)")
            // Ordinary objects describe themselves in full.
            let object = ReentryDescribing()
            #expect(object.describedAtInit == #"ReentryDescribing(id: nil, name: "initial")"#)
            try ReentryDescribing.createTable()
            object.name = "saved"
            try object.save()
            #expect(try ReentryDescribing.findAll().map(\.name) == ["saved"])
        }
    }

    @Test func aPropertyInitialisedByAQueryOfItsOwnClassDoesNotRecurse() throws {
        try withModelDB { _ in
            try ReentrySelfCounting.createTable()
            let schema = try ModelSchema.of(ReentrySelfCounting.self)
            #expect(schema.columns.map(\.name) == ["name"])
            // The prototype's query could not run (the class had no schema yet)…
            #expect((schema.prototype as? ReentrySelfCounting)?.countAtInit == -1)
            // …ordinary objects' queries do.
            let first = ReentrySelfCounting()
            #expect(first.countAtInit == 0)
            try first.save()
            #expect(ReentrySelfCounting().countAtInit == 1)
        }
    }

    @Test func modelsWhoseInitsQueryEachOtherAreBothBuilt() throws {
        try withModelDB { _ in
            try ReentryTag.createTable()
            try ReentryOwner.createTable()
            for label in ["b", "a"] {
                let tag = ReentryTag()
                tag.label = label
                try tag.save()
            }
            #expect(try ModelSchema.of(ReentryOwner.self).columns.map(\.name) == ["name", "rank"])
            #expect(try ModelSchema.of(ReentryTag.self).columns.map(\.name) == ["label"])

            // An ordinary owner loads its first tag: an ordinary, tracked object.
            let owner = ReentryOwner()
            let tag = try #require(owner.firstTag)
            #expect(tag.label == "a")
            #expect(!tag.hasChanges)
            tag.label = "A"
            #expect(tag.changedColumns == ["label"])
            try tag.save()
            #expect(try ReentryTag.all.order(by: \.$label).pluck(\.$label) == ["A", "b"])
            owner.name = "o"
            try owner.save()
            #expect(try ReentryOwner.findAll().map(\.name) == ["o"])
        }
    }

    @Test func aClassSettingThatUsesTheClassItselfDoesNotRecurse() throws {
        // The build asks for tableName, which asks for the schema being built: refused
        // (the setting falls back), and the build goes on.
        let schema = try ModelSchema.of(ReentryTableName.self)
        #expect(schema.tableName == "reentry_table_name")
    }

    @Test func theReentryErrorIsNotCached() throws {
        final class BuiltHereOnly: ModelTestRecord {
            @Column var name = ""
        }
        let error = PrototypeConstruction.withSchemaBuild(of: BuiltHereOnly.self) { _ in
            expectActiveObjectError { _ = try ModelSchema.of(BuiltHereOnly.self) }
        }
        guard case let .invalidModel(model, reason)? = error else {
            Issue.record("expected invalidModel, got \(String(describing: error))")
            return
        }
        #expect(model == "BuiltHereOnly")
        #expect(reason.contains("while its own schema is being built"))
        #expect(try ModelSchema.of(BuiltHereOnly.self).columns.map(\.name) == ["name"])
    }

    @Test func defaultTableNamesIgnoreTheModuleAndEnclosingTypes() {
        // Two models named alike in two modules (or two enclosing types) map to the same
        // table by default: README "Conventions" says to override `tableName` then.
        enum First { final class Person: ActiveObject {} }
        enum Second { final class Person: ActiveObject {} }
        #expect(First.Person.tableName == "person")
        #expect(Second.Person.tableName == "person")
        #expect(String(reflecting: First.Person.self) != String(reflecting: Second.Person.self))
    }

    /// Every subset of 10 columns as an UPDATE shape: more than the per-class cache of UPDATE
    /// SQL (256), so later shapes are built per save; each must write exactly its columns.
    @Test func everyUpdateShapeWritesItsOwnColumns() throws {
        let db = try Database.inMemory()
        wideRowDatabase.withLock { $0 = db }
        defer { wideRowDatabase.withLock { $0 = nil } }
        try WideRow.createTable()
        let row = WideRow()
        try row.save()
        var expected = Array(repeating: 0, count: 10)
        let keyPaths: [ReferenceWritableKeyPath<WideRow, Int>] = [\.c0, \.c1, \.c2, \.c3, \.c4, \.c5, \.c6, \.c7, \.c8, \.c9]
        for mask in 1..<1024 {
            for bit in 0..<10 where mask & (1 << bit) != 0 {
                expected[bit] = mask * 10 + bit
                row[keyPath: keyPaths[bit]] = expected[bit]
            }
            try row.save()
            let stored = try #require(try db.rows("SELECT * FROM wide_row WHERE id = ?", [row.id!]).first)
            let values: [Int] = try (0..<10).map { try stored["c\($0)"] }
            #expect(values == expected, "mask \(mask)")
            if values != expected { break }
        }
    }
}

/// The database of `WideRow` (everyUpdateShapeWritesItsOwnColumns), set by that test.
private let wideRowDatabase = Locked<Database?>(nil)

final class WideRow: ActiveObject {
    override class var database: Database? { wideRowDatabase.withLock { $0 } }
    @Column var c0 = 0; @Column var c1 = 0; @Column var c2 = 0; @Column var c3 = 0; @Column var c4 = 0
    @Column var c5 = 0; @Column var c6 = 0; @Column var c7 = 0; @Column var c8 = 0; @Column var c9 = 0
}
