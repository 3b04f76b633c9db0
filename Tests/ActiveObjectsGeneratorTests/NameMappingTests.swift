import ActiveObjects
import Foundation
import Testing
@testable import ActiveObjectsGenerator

@Suite("Generator: names")
struct NameMappingTests {
    @Test("column names become lowerCamelCase properties", arguments: [
        ("first_name", "firstName"), ("FIRST_NAME", "firstName"), ("name", "name"),
        ("groupId", "groupId"), ("artistID", "artistID"), ("URLValue", "urlValue"),
        ("e-mail", "eMail"), ("first name", "firstName"), ("_rev", "rev"), ("group_ID", "groupId"),
        ("address2", "address2"),
    ])
    func lowerCamel(column: String, property: String) {
        #expect(SwiftNames.lowerCamel(column) == property)
    }

    @Test("names without any usable character map to nil")
    func unusableIdentifiers() {
        #expect(SwiftNames.lowerCamel("€") == nil)
        #expect(SwiftNames.lowerCamel("_") == nil)
        #expect(SwiftNames.className(forTable: "---") == nil)
    }

    @Test("table names become singular UpperCamelCase classes", arguments: [
        ("people", "Person"), ("groups", "Group"), ("categories", "Category"), ("blog_posts", "BlogPost"),
        ("BlogPosts", "BlogPost"), ("PEOPLE", "Person"), ("addresses", "Address"), ("boxes", "Box"),
        ("statuses", "Status"), ("news", "News"), ("person", "Person"), ("class", "Class"),
        ("movies", "Movie"), ("user_settings", "UserSettings"), ("children", "Child"),
    ])
    func className(table: String, className: String) {
        #expect(SwiftNames.className(forTable: table) == className)
    }

    @Test("plurals name has-many relations", arguments: [
        ("person", "people"), ("category", "categories"), ("address", "addresses"), ("group", "groups"),
        ("day", "days"), ("box", "boxes"), ("blogPost", "blogPosts"), ("status", "statuses"),
    ])
    func plural(singular: String, plural: String) {
        #expect(Inflection.plural(singular) == plural)
    }

    @Test("Swift keywords are escaped with backticks; other names are not")
    func keywords() {
        #expect(SwiftNames.escaped("default") == "`default`")
        #expect(SwiftNames.escaped("class") == "`class`")
        #expect(SwiftNames.escaped("where") == "`where`")
        #expect(SwiftNames.escaped("order") == "order")
        #expect(SwiftNames.escaped("name") == "name")
    }

    /// The models for a schema given as SQL, generated as-is.
    private func generate(_ sql: String) throws -> String {
        let db = try Database.inMemory()
        defer { try? db.close() }
        for statement in SchemaSource.statements(in: sql) { try db.execute(statement.sql) }
        return try Generator.generate(database: db, sourceName: "schema.sql").source
    }

    @Test("a class named like a standard, concurrency, Foundation or library type gets `Record`", arguments: [
        ("sendable", "SendableRecord"), ("Protocol", "ProtocolRecord"), ("types", "TypeRecord"), ("self", "SelfRecord"),
        ("any", "AnyRecord"), ("strings", "StringRecord"), ("data", "DataRecord"), ("dates", "DateRecord"),
        ("decimals", "DecimalRecord"), ("errors", "ErrorRecord"), ("results", "ResultRecord"), ("arrays", "ArrayRecord"),
        ("dictionaries", "DictionaryRecord"), ("sets", "SetRecord"), ("optionals", "OptionalRecord"), ("tasks", "TaskRecord"),
        ("actors", "ActorRecord"), ("codable", "CodableRecord"), ("equatable", "EquatableRecord"),
        ("identifiable", "IdentifiableRecord"), ("collections", "CollectionRecord"), ("sequences", "SequenceRecord"),
        ("characters", "CharacterRecord"), ("bools", "BoolRecord"), ("ranges", "RangeRecord"), ("locales", "LocaleRecord"),
        ("calendars", "CalendarRecord"), ("time_zones", "TimeZoneRecord"), ("notifications", "NotificationRecord"),
        ("operations", "OperationRecord"), ("threads", "ThreadRecord"), ("timers", "TimerRecord"), ("bundles", "BundleRecord"),
        ("processes", "ProcessRecord"), ("mirrors", "MirrorRecord"), ("key_paths", "KeyPathRecord"),
        ("columns", "ColumnRecord"), ("queries", "QueryRecord"), ("databases", "DatabaseRecord"), ("rows", "RowRecord"),
        ("active_objects", "ActiveObjectRecord"), ("migrators", "MigratorRecord"), ("has_many", "HasManyRecord"),
        ("belongs_to", "BelongsToRecord"), ("cursors", "CursorRecord"), ("validation_errors", "ValidationErrorRecord"),
    ])
    func reservedClassNames(table: String, className: String) {
        #expect(ModelPlan.className(for: table, taken: []).name == className)
    }

    @Test("names that clash with nothing are kept; the comparison is case-sensitive", arguments: [
        ("people", "Person"), ("urls", "Url"), ("uuids", "Uuid"), ("groups", "Group"), ("labels", "Label"), ("records", "Record"),
    ])
    func unreservedClassNames(table: String, className: String) {
        #expect(ModelPlan.className(for: table, taken: []).name == className)
    }

    @Test("every public type of ActiveObjects is a reserved class name")
    func libraryTypesAreReserved() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/ActiveObjects")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 20)
        let declaration = /^(?:nonisolated )?(?:public|open) (?:final )?(?:class|struct|enum|protocol|typealias|actor) ([A-Za-z_][A-Za-z0-9_]*)/
        var names = Set<String>()
        for file in files {
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                if let match = line.firstMatch(of: declaration) { names.insert(String(match.1)) }
            }
        }
        #expect(names.contains("Row") && names.contains("ActiveObject") && names.contains("Query"))
        #expect(names.subtracting(SwiftNames.reservedTypeNames).isEmpty,
                "add to SwiftNames.libraryTypeNames: \(names.subtracting(SwiftNames.reservedTypeNames).sorted())")
    }

    @Test("relations to and from a renamed class name the class, and keep the table's name")
    func relationsOfRenamedClasses() throws {
        let source = try generate("""
            CREATE TABLE sendable (id INTEGER PRIMARY KEY, note TEXT);
            CREATE TABLE "Protocol" (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE tasks (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id), title TEXT NOT NULL);
            CREATE TABLE rows (id INTEGER PRIMARY KEY, sendable_id INTEGER REFERENCES sendable, protocol INTEGER REFERENCES "Protocol");
            CREATE TABLE task_rows (task_id INTEGER NOT NULL REFERENCES tasks, row_id INTEGER NOT NULL REFERENCES rows,
                                    PRIMARY KEY (task_id, row_id));
            """)
        for line in [
            "final class SendableRecord: ActiveObject {\n    override class var tableName: String { \"sendable\" }\n",
            "final class ProtocolRecord: ActiveObject {\n    override class var tableName: String { \"Protocol\" }\n",
            "final class TaskRecord: ActiveObject {\n    override class var tableName: String { \"tasks\" }\n",
            "final class RowRecord: ActiveObject {\n    override class var tableName: String { \"rows\" }\n",
            // on the children: `references:` and BelongsTo name the renamed parent
            "    @Column(\"sendable_id\", references: SendableRecord.self) var sendableId: Int64? = nil\n",
            "    @Column(references: ProtocolRecord.self) var `protocol`: Int64? = nil\n",
            "    var sendable: BelongsTo<SendableRecord> { belongsTo(\\.$sendableId) }\n",
            "    var protocolRecord: BelongsTo<ProtocolRecord> { belongsTo(\\.$protocol) }\n",
            "    var project: BelongsTo<Project> { belongsTo(\\.$projectId) }\n",
            // on the parents: HasMany of the renamed child, named after the table
            "    var tasks: HasMany<TaskRecord> { hasMany(\\.$projectId) }\n",
            "    var rows: HasMany<RowRecord> { hasMany(\\.$sendableId) }\n",
            "    var rows: HasManyThrough<RowRecord> { hasMany(through: \\TaskRow.$taskId, \\TaskRow.$rowId) }\n",
            "    var tasks: HasManyThrough<TaskRecord> { hasMany(through: \\TaskRow.$rowId, \\TaskRow.$taskId) }\n",
            "    @Column(\"task_id\", references: TaskRecord.self) var taskId: Int64 = 0\n",
        ] {
            #expect(source.contains(line), "missing: \(line)")
        }
        for clash in ["class Sendable:", "class Protocol:", "class Task:", "class Row:", "<Sendable>", "<Task>", "<Row>"] {
            #expect(!source.contains(clash), "\(clash)")
        }
    }
}
