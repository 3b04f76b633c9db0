import Foundation
import Testing
@testable import ActiveObjects

// A catalogue of model edits of one table, applied in seeded random order through
// `createTable()` and `migrate(rebuildingTable: true)`, with a child table that cascades on
// delete and on update, triggers and a view. After each step: the plan taken before is what
// ran, nothing is left to plan, every row of parent and child is there with every value.

final class MECGroup: SchemaTestModel {
    override class var tableName: String { "mec_group" }
    @Column var title = ""
}

/// The first version.
final class MECBase: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column var name = ""
    @Column(renamedFrom: "points") var score = 0
    @Column var flag = false
    @Column var note: String? = nil
    @Column var code = ""
}

/// Adds a column.
final class MECWeighted: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column var name = ""
    @Column(renamedFrom: "points") var score = 0
    @Column var flag = false
    @Column var note: String? = nil
    @Column var code = ""
    @Column var weight = 1.5
}

/// Removes a column (`note`).
final class MECNoNote: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column var name = ""
    @Column(renamedFrom: "points") var score = 0
    @Column var flag = false
    @Column var code = ""
    @Column var weight = 1.5
}

/// Renames `score` to `points`.
final class MECPoints: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column var name = ""
    @Column(renamedFrom: "score") var points = 0
    @Column var flag = false
    @Column var note: String? = nil
    @Column var code = ""
}

/// Retypes `score`: Int → Double.
final class MECRealScore: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column var name = ""
    @Column(renamedFrom: "points") var score = 0.0
    @Column var flag = false
    @Column var note: String? = nil
    @Column var code = ""
}

/// Retypes `score`: Int → String.
final class MECTextScore: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column var name = ""
    @Column(renamedFrom: "points") var score = "0"
    @Column var flag = false
    @Column var note: String? = nil
    @Column var code = ""
}

/// Retypes `flag`: Bool → Int.
final class MECIntFlag: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column var name = ""
    @Column(renamedFrom: "points") var score = 0
    @Column var flag = 0
    @Column var note: String? = nil
    @Column var code = ""
}

/// Reorders the columns (and has `weight`).
final class MECReordered: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column var code = ""
    @Column var weight = 1.5
    @Column var note: String? = nil
    @Column var flag = false
    @Column(renamedFrom: "points") var score = 0
    @Column var name = ""
}

/// Adds constraints: an index and a unique index.
final class MECConstrained: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column(indexed: true) var name = ""
    @Column(renamedFrom: "points") var score = 0
    @Column var flag = false
    @Column var note: String? = nil
    @Column(unique: true) var code = ""
}

/// Adds a foreign key.
final class MECGrouped: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column var name = ""
    @Column(renamedFrom: "points") var score = 0
    @Column var flag = false
    @Column var note: String? = nil
    @Column var code = ""
    @Column(references: MECGroup.self, onDelete: .setNull) var groupId: Int64? = nil
}

/// Adds a non-optional column whose default is computed at run time.
final class MECStamped: SchemaTestModel {
    override class var tableName: String { "mec_parent" }
    @Column var name = ""
    @Column(renamedFrom: "points") var score = 0
    @Column var flag = false
    @Column var note: String? = nil
    @Column var code = ""
    @Column var stamp = Date()
}

@Suite struct ModelEditCatalogueTests {
    /// One model version, callable without knowing its class.
    struct Version: CustomStringConvertible {
        let description: String
        /// The columns in slot order, with the old name each may be renamed from.
        let columns: [(name: String, renamedFrom: String?)]
        let createTable: () throws -> Void
        let rebuild: () throws -> Void
        let plan: (_ rebuildingTable: Bool) throws -> [String]
        /// Reads every row through the model.
        let readAll: () throws -> Int

        static func of<Model: ActiveObject>(_ model: Model.Type) throws -> Version {
            let schema = try ModelSchema.of(model)
            return Version(description: schema.modelName,
                           columns: schema.columns.map { (name: $0.name, renamedFrom: $0.options.renamedFrom) },
                           createTable: { try Model.createTable() },
                           rebuild: { try Model.migrate(rebuildingTable: true) },
                           plan: { try Model.schemaPlan(rebuildingTable: $0) },
                           readAll: { try Model.findAll().count })
        }
    }

    static func versions() throws -> [Version] {
        try [Version.of(MECBase.self), Version.of(MECWeighted.self), Version.of(MECNoNote.self), Version.of(MECPoints.self),
             Version.of(MECRealScore.self), Version.of(MECTextScore.self), Version.of(MECIntFlag.self),
             Version.of(MECReordered.self), Version.of(MECConstrained.self), Version.of(MECGrouped.self),
             Version.of(MECStamped.self)]
    }

    /// A value as the model means it; stored values are compared by what they mean (`5`,
    /// `5.0` and `'5'` are the score 5).
    enum Value: Equatable, CustomStringConvertible {
        case null
        case text(String)
        case number(Int)
        case real(Double)
        /// The value a column whose default is computed at run time gave the rows it was added
        /// to: learnt at the first check, then the same for every such row.
        case fill(slot: Int)

        var description: String {
            switch self {
            case .null: "NULL"
            case .text(let text): "'\(text)'"
            case .number(let number): "\(number)"
            case .real(let real): "\(real)"
            case .fill(let slot): "fill#\(slot)"
            }
        }

        /// Whether a stored value means this one.
        func isMeant(by stored: DatabaseValue) -> Bool {
            switch (self, stored) {
            case (.null, .null): return true
            case (.text(let text), .text(let other)): return text == other
            case (.number(let number), .integer(let other)): return Int64(number) == other
            case (.number(let number), .real(let other)): return Double(number) == other
            case (.number(let number), .text(let other)): return Int(other) == number || Double(other) == Double(number)
            case (.real(let real), .real(let other)): return real == other
            case (.real(let real), .integer(let other)): return real == Double(other)
            default: return false
            }
        }
    }

    /// What a column added to existing rows gives them.
    static func fill(_ column: String, fills: inout Int) -> Value {
        switch column {
        case "name", "code": return .text("")
        case "score", "points", "flag": return .number(0)
        case "weight": return .real(1.5)
        case "note", "groupId": return .null
        case "stamp":
            fills += 1
            return .fill(slot: fills)
        default: return .null
        }
    }

    /// The expected table: its columns (in no particular order) and rows by id.
    struct Expectation {
        var columns: [String] = []
        var rows: [Int64: [String: Value]] = [:]
        var children: [[DatabaseValue]] = []
        var fills: [Int: DatabaseValue] = [:]
        var fillCount = 0

        func column(_ name: String) -> String? { columns.first { $0.lowercased() == name.lowercased() } }

        /// The columns the table keeps under `version` — the model's, with their values — and,
        /// unless `exactly`, the others as they are.
        mutating func apply(_ version: Version, exactly: Bool) {
            var next: [String] = []
            var consumed = Set<String>()
            var newRows = rows.mapValues { _ in [String: Value]() }
            for (name, renamedFrom) in version.columns {
                let source = column(name) ?? renamedFrom.flatMap { column($0) }
                let value = source == nil ? ModelEditCatalogueTests.fill(name, fills: &fillCount) : nil
                for id in rows.keys {
                    newRows[id]?[name] = source.map { rows[id]?[$0] ?? .null } ?? value
                }
                if let source { consumed.insert(source.lowercased()) }
                next.append(name)
            }
            if !exactly {
                for name in columns where !consumed.contains(name.lowercased()) && !next.contains(name) {
                    next.append(name)
                    for id in rows.keys { newRows[id]?[name] = rows[id]?[name] }
                }
            }
            columns = next
            rows = newRows
        }

        /// The columns `version` does not declare and cannot rename from.
        func extraColumns(for version: Version) -> [String] {
            let known = Set(version.columns.flatMap { [$0.name.lowercased()] + ($0.renamedFrom.map { [$0.lowercased()] } ?? []) })
            return columns.filter { !known.contains($0.lowercased()) }
        }
    }

    /// A random value for a new row's column.
    static func randomValue(_ column: String, code: Int, using rng: inout SeededGenerator) -> Value {
        switch column {
        case "name": return .text(pick(["Ann", "O'Brien", "Zoë", "名前", "", "a\"b", "tab\there"], using: &rng))
        case "code": return .text("c\(code)")
        case "note": return Bool.random(using: &rng) ? .null : .text("note \(Int.random(in: 0...99, using: &rng))")
        case "score", "points": return .number(Int.random(in: -1000...1000, using: &rng))
        case "flag": return .number(Int.random(in: 0...1, using: &rng))
        case "weight": return .real(pick([0.5, 2.25, -3.125, 1e10, 0], using: &rng))
        case "groupId": return pick([Value.null, .number(1), .number(2)], using: &rng)
        case "stamp": return .text("2021-05-06 07:08:09.000")
        default: return .null
        }
    }

    /// A random element of a non-empty array.
    static func pick<T>(_ elements: [T], using rng: inout SeededGenerator) -> T {
        elements[Int.random(in: 0..<elements.count, using: &rng)]
    }

    static func bind(_ value: Value) -> (any ColumnValue)? {
        switch value {
        case .null, .fill: nil
        case .text(let text): text
        case .number(let number): number
        case .real(let real): real
        }
    }

    /// Inserts `count` parents (with the columns the table has now) and a few children each.
    static func insertRows(_ count: Int, into db: Database, expectation: inout Expectation, codes: inout Int,
                           using rng: inout SeededGenerator) throws {
        for _ in 0..<count {
            codes += 1
            var values: [String: Value] = [:]
            for column in expectation.columns { values[column] = randomValue(column, code: codes, using: &rng) }
            let names = expectation.columns.map { "\"\($0)\"" }.joined(separator: ", ")
            let marks = expectation.columns.map { _ in "?" }.joined(separator: ", ")
            try db.execute("INSERT INTO mec_parent (\(names)) VALUES (\(marks))",
                           arguments: expectation.columns.map { bind(values[$0] ?? .null) })
            let id = try #require(try db.scalar("SELECT max(id) FROM mec_parent") as Int64?)
            expectation.rows[id] = values
            for child in 0..<Int.random(in: 0...3, using: &rng) {
                try db.execute("INSERT INTO mec_child (parentId, label) VALUES (?, ?)", [id, "k\(id).\(child)"])
                let childID = try #require(try db.scalar("SELECT max(id) FROM mec_child") as Int64?)
                expectation.children.append([.integer(childID), .integer(id), .text("k\(id).\(child)")])
            }
        }
    }

    /// Compares the file with the expectation (learning the values of run-time fills).
    static func check(_ db: Database, _ expectation: inout Expectation, step: String) throws {
        let actual = try columnNames(db, "mec_parent").filter { $0 != "id" }
        #expect(Set(actual.map { $0.lowercased() }) == Set(expectation.columns.map { $0.lowercased() }), "\(step): columns")
        let rows = try db.rows("SELECT * FROM mec_parent ORDER BY id")
        #expect(rows.count == expectation.rows.count, "\(step): parent rows")
        for row in rows {
            let id: Int64 = try row["id"]
            guard let expected = expectation.rows[id] else {
                Issue.record("\(step): unexpected row \(id)")
                continue
            }
            for column in expectation.columns {
                let stored = row.values[try #require(row.columnNames.firstIndex { $0.lowercased() == column.lowercased() })]
                let value = expected[column] ?? .null
                if case .fill(let slot) = value {
                    if let known = expectation.fills[slot] {
                        #expect(stored == known, "\(step): row \(id) \(column)")
                    } else {
                        #expect(stored != .null, "\(step): row \(id) \(column)")
                        expectation.fills[slot] = stored
                    }
                    #expect(DateStrategy.iso8601Text.decode(stored) != nil, "\(step): row \(id) \(column) = \(stored)")
                } else {
                    #expect(value.isMeant(by: stored), "\(step): row \(id) \(column): expected \(value), found \(stored)")
                }
            }
        }
        #expect(try db.rows("SELECT id, parentId, label FROM mec_child ORDER BY id").map(\.values) == expectation.children,
                "\(step): children")
        #expect(try count(db, "SELECT count(*) FROM mec_family") == expectation.children.count, "\(step): view")
        #expect(try count(db, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'mec_parent'") == 2,
                "\(step): triggers")
        #expect(try count(db, "SELECT count(*) FROM mec_log") == 0, "\(step): no trigger fired")
        #expect(try db.scalar("PRAGMA integrity_check") as String? == "ok", "\(step): integrity")
        #expect(try db.rows("PRAGMA foreign_key_check").isEmpty, "\(step): foreign keys")
        #expect(try connectionFlags(db) == [1, 0], "\(step): foreign_keys, legacy_alter_table")
    }

    @Test(arguments: Array(1...10) as [UInt64])
    func aRandomWalkThroughTheCatalogueLosesNothing(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let versions = try Self.versions()
        let folder = try TemporaryFolder()
        let fx = try SchemaFixture(path: folder.path("catalogue-\(seed).sqlite"))
        var expectation = Expectation()
        var codes = 0
        try fx.run {
            try MECGroup.createTable()
            try fx.db.execute("INSERT INTO mec_group (title) VALUES ('one'), ('two')")
            try versions[0].createTable()
            expectation.apply(versions[0], exactly: true)
            try fx.db.execute("""
                CREATE TABLE mec_child (id INTEGER PRIMARY KEY, label TEXT NOT NULL,
                parentId INTEGER NOT NULL REFERENCES mec_parent(id) ON DELETE CASCADE ON UPDATE CASCADE)
                """)
            try fx.db.execute("CREATE TABLE mec_log (line TEXT)")
            try fx.db.execute("CREATE TRIGGER mec_parent_named AFTER UPDATE OF name ON mec_parent BEGIN INSERT INTO mec_log VALUES (NEW.name); END")
            try fx.db.execute("CREATE TRIGGER mec_parent_deleted AFTER DELETE ON mec_parent BEGIN INSERT INTO mec_log VALUES ('deleted'); END")
            try fx.db.execute("CREATE VIEW mec_family AS SELECT p.id, p.name, p.code, c.label FROM mec_parent AS p JOIN mec_child AS c ON c.parentId = p.id")
            try Self.insertRows(Int.random(in: 5...15, using: &rng), into: fx.db, expectation: &expectation, codes: &codes, using: &rng)
            try Self.check(fx.db, &expectation, step: "seed \(seed), start")

            for stepNumber in 1...16 {
                let version = Self.pick(versions, using: &rng)
                let rebuilding = Bool.random(using: &rng)
                let step = "seed \(seed), step \(stepNumber): \(rebuilding ? "migrate(rebuildingTable: true)" : "createTable()") \(version)"
                if Int.random(in: 0...2, using: &rng) == 0 {
                    try Self.insertRows(Int.random(in: 1...4, using: &rng), into: fx.db, expectation: &expectation,
                                        codes: &codes, using: &rng)
                }
                let before = try databaseDump(fx.db)
                // A non-optional column with a run-time default cannot be added by ALTER TABLE;
                // createTable() rebuilds then, unless the rebuild would drop columns.
                let addsRuntimeColumn = version.columns.contains { $0.name == "stamp" } && expectation.column("stamp") == nil
                let extra = expectation.extraColumns(for: version)
                if !rebuilding && addsRuntimeColumn && !extra.isEmpty {
                    expectActiveObjectError({ _ = try version.plan(false) }, matches: \.isInvalidModel)
                    expectActiveObjectError({ try version.createTable() }, matches: \.isInvalidModel)
                    #expect(try databaseDump(fx.db) == before, "\(step): changed after a refusal")
                    continue
                }
                let plan = try version.plan(rebuilding)
                let ran = try writes(fx) { try rebuilding ? version.rebuild() : version.createTable() }
                #expect(ran == plan, "\(step): plan \(plan) ran \(ran)")
                #expect(try version.plan(rebuilding).isEmpty, "\(step): plan left")
                if plan.isEmpty { #expect(try databaseDump(fx.db) == before, "\(step): an empty plan changed the file") }
                expectation.apply(version, exactly: rebuilding || addsRuntimeColumn)
                try Self.check(fx.db, &expectation, step: step)
                if rebuilding || addsRuntimeColumn {
                    // After a rebuild the types are the model's, and every value is one the
                    // model reads. (createTable() retypes nothing: a score stored as '802.0' by
                    // an earlier String version stays text, which an Int model does not read.)
                    #expect(try version.readAll() == expectation.rows.count, "\(step): read through the model")
                }
            }
            // The cascades still work at the end.
            try fx.db.execute("UPDATE mec_parent SET id = id + 1000")
            #expect(try count(fx.db, "SELECT count(*) FROM mec_child WHERE parentId < 1000") == 0)
            try fx.db.execute("DELETE FROM mec_parent")
            #expect(try count(fx.db, "SELECT count(*) FROM mec_child") == 0)
        }
    }
}
