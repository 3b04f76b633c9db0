import Foundation
import Testing
@testable import ActiveObjects

/// Turning result rows into objects: the canonical layout of the model's own SELECTs, result
/// columns matched by name, missing and extra columns, mismatches, and the state of a loaded
/// object. (Tests the loader as it is; see ObjectLoader.swift.)
@Suite struct ObjectLoaderTests {
    final class Item: ModelTestRecord {
        @Column var name = "default"
        @Column var count = 7
        @Column var note: String? = "kept"
        @Column var small: Int8 = 0
    }

    /// Runs `sql` on `database` and loads every row with a loader built by `makeLoader`.
    func load(_ database: Database, _ sql: String,
              _ makeLoader: (ModelSchema, Statement, ValueContext) -> ObjectLoader) throws -> [Item] {
        let schema = try ModelSchema.of(Item.self)
        let context = schema.context(in: database)
        return try database.withReader { connection in
            let statement = try connection.prepare(sql)
            defer { statement.finalize() }
            let loader = makeLoader(schema, statement, context)
            var items: [Item] = []
            while try statement.step() {
                items.append(try #require(loader.load(from: statement) as? Item))
            }
            return items
        }
    }

    func byName(_ database: Database, _ sql: String) throws -> [Item] {
        try load(database, sql) { ObjectLoader(schema: $0, statement: $1, context: $2) }
    }

    func withItems(_ body: (Database) throws -> Void) throws {
        try withModelDB { database in
            try Item.createTable()
            try database.execute("INSERT INTO item (id, name, count, note, small) VALUES (1, 'a', 1, NULL, 1), (2, 'b', 2, 'n', 2)")
            try body(database)
        }
    }

    /// Whether the object holds what its row holds, edits tracked from now on and none made.
    func allClean(_ object: ActiveObject) throws -> Bool {
        object.edits == nil && object.assignmentBookkeeping & AssignmentBookkeeping.tracksEdits != 0
    }

    @Test func theCanonicalLoaderReadsTheModelsOwnSelect() throws {
        try withItems { database in
            let schema = try ModelSchema.of(Item.self)
            let items = try load(database, schema.selectSQL + " ORDER BY id") { schema, _, context in
                ObjectLoader(canonicalFor: schema, context: context)
            }
            #expect(items.map(\.id) == [1, 2])
            #expect(items.map(\.name) == ["a", "b"])
            #expect(items.map(\.note) == [nil, "n"])
            #expect(items.map(\.small) == [1, 2])
            for item in items {
                #expect(item.recordState == .persisted)
                #expect(try allClean(item))
                #expect(!item.hasChanges)
            }
        }
    }

    @Test func columnsAreMatchedByNameCaseInsensitivelyAndExtrasAreIgnored() throws {
        try withItems { database in
            let items = try byName(database, "SELECT 'x' AS extra, COUNT AS Count, NAME, id FROM item ORDER BY id")
            #expect(items.map(\.id) == [1, 2])
            #expect(items.map(\.name) == ["a", "b"])
            #expect(items.map(\.count) == [1, 2])
        }
    }

    @Test func theFirstOfTwoResultColumnsWithTheSameNameWins() throws {
        try withItems { database in
            let items = try byName(database, "SELECT id, 'first' AS name, 'second' AS name FROM item WHERE id = 1")
            #expect(items.map(\.name) == ["first"])
        }
    }

    @Test func missingColumnsKeepTheirDefaultsYetAreTrackedFromNowOn() throws {
        try withItems { database in
            let items = try byName(database, "SELECT id, name FROM item WHERE id = 2")
            let item = try #require(items.first)
            #expect(item.name == "b")
            #expect(item.count == 7)
            #expect(item.note == "kept")
            #expect(try allClean(item))
            #expect(!item.hasChanges)
            item.count = 8
            #expect(item.changedColumns == ["count"])
        }
    }

    @Test func withoutTheKeyColumnTheObjectHasNoID() throws {
        try withItems { database in
            let items = try byName(database, "SELECT name FROM item ORDER BY name")
            #expect(items.map(\.id) == [nil, nil])
            #expect(items.map(\.name) == ["a", "b"])
        }
    }

    @Test func aValueThatDoesNotFitNamesTableColumnAndRow() throws {
        try withItems { database in
            try database.execute("UPDATE item SET small = 300 WHERE id = 2")
            let error = expectActiveObjectError { _ = try byName(database, "SELECT * FROM item ORDER BY id") }
            let fields = try #require(error?.typeMismatchFields)
            #expect(fields.table == "item")
            #expect(fields.column == "small")
            #expect(fields.rowID == 2)
            #expect(fields.expected == "Int8")
            #expect(fields.found.contains("300"))
        }
    }

    @Test func aKeyThatIsNotAnIntegerIsAMismatchOfTheKeyColumn() throws {
        try withItems { database in
            let error = expectActiveObjectError { _ = try byName(database, "SELECT 'abc' AS id, name FROM item") }
            let fields = try #require(error?.typeMismatchFields)
            #expect(fields.column == "id")
            #expect(fields.expected == "Int64")
        }
    }

    @Test func nullIntoANonOptionalIsAMismatch() throws {
        try withItems { database in
            let error = expectActiveObjectError { _ = try byName(database, "SELECT id, NULL AS name FROM item") }
            #expect(error?.typeMismatchFields?.column == "name")
        }
    }

    @Test func fillingAnExistingObjectReplacesItsValuesAndPendingChanges() throws {
        try withItems { database in
            let item = try #require(try Item.find(id: 1))
            item.name = "pending"
            #expect(item.changedColumns == ["name"])
            let schema = try ModelSchema.of(Item.self)
            try database.withReader { connection in
                let statement = try connection.prepare(schema.declaredSQL.findByKeySQL.sql)
                defer { statement.finalize() }
                try statement.bind([.integer(1)])
                #expect(try statement.step())
                let loader = ObjectLoader(canonicalFor: schema, context: schema.context(in: database))
                try loader.fill(item, from: statement)
            }
            #expect(item.name == "a")
            #expect(try allClean(item))
            #expect(!item.hasChanges)
        }
    }
}
