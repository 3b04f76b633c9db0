import ActiveObjects
import Foundation
import Testing
@testable import ActiveObjectsGenerator

/// The database of the generated models of TimestampModels.swift during one test: a task-local,
/// so that tests run in parallel, each with its own in-memory database.
enum TimestampTestDB {
    @TaskLocal static var current: Database?
}

/// Base class of the models of TimestampModels.swift (the name `GeneratedTestModelsTests.wrapForTests`
/// writes): they live in the current test's database.
class ModelTestRecord: ActiveObject {
    override class var database: Database? { TimestampTestDB.current }
}

/// API.md §19 in the generator: columns whose default is the moment of the insert become
/// `@Column(role: .createdAt)` / `.updatedAt` (never a 1970 date), `lock_version` becomes
/// `.lockVersion`, `deleted_at` becomes `.deletedAt` with `--soft-delete`; the generated models
/// compile (TimestampModels.swift is the generator's output) and stamp the current date.
@Suite("Generator: timestamps, soft delete, lock version")
struct TimestampMappingTests {
    /// The models for a schema given as SQL, generated as-is.
    private func generate(_ sql: String, softDelete: Bool = false) throws -> Generator.Output {
        let db = try Database.inMemory()
        defer { try? db.close() }
        for statement in SchemaSource.statements(in: sql) { try db.execute(statement.sql) }
        var options = Generator.Options()
        options.softDelete = softDelete
        return try Generator.generate(database: db, sourceName: "schema.sql", options: options)
    }

    private func lines(_ source: String) -> Set<String> {
        Set(source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
    }

    /// The `@Column` declarations that have a role (comments may name roles too).
    private func roleDeclarations(_ source: String) -> [String] {
        source.split(separator: "\n").map(String.init).filter { $0.hasPrefix("    @Column(") && $0.contains("role: .") }
    }

    /// The generated class named `name`, from its doc comment to its closing brace.
    private func classText(_ name: String, in source: String) -> String? {
        let blocks = source.components(separatedBy: "\n\n/// ")
        return blocks.first(where: { $0.contains("final class \(name): ActiveObject {") })
            .map { "/// " + $0.trimmingCharacters(in: .newlines) }
    }

    // MARK: - Which defaults are "now"

    @Test("defaults that are the moment of the insert, in any spelling", arguments: [
        "CURRENT_TIMESTAMP", "current_timestamp", "(CURRENT_TIMESTAMP)", "((CURRENT_TIMESTAMP))", " ( Current_Timestamp ) ",
        "CURRENT_DATE", "datetime('now')", "(datetime('now'))", "DATETIME( 'NOW' )", "datetime(\"now\")", "datetime()",
        "datetime('now', 'utc')", "datetime('now','subsec')", "date('now')", "(date('now'))",
        "strftime('%Y-%m-%d %H:%M:%f', 'now')", "(strftime('%Y-%m-%dT%H:%M:%fZ','now'))", "STRFTIME('%s')",
    ])
    func nowDefaults(sql: String) {
        #expect(SQLDefault(sql: sql).isCurrentTime, "\(sql)")
    }

    @Test("defaults that are not the moment of the insert", arguments: [
        "CURRENT_TIME", "'2000-01-01'", "0", "NULL", "'now'", "datetime('now', 'localtime')", "date('now', '+7 days')",
        "datetime('2000-01-01')", "julianday('now')", "unixepoch()", "unixepoch('now')", "strftime('%s', '2000-01-01')",
        "datetime('now') || 'x'", "datetime('now') || datetime('now')", "lower('now')", "(1 + 2)", "current_timestamp_x",
    ])
    func otherDefaults(sql: String) {
        #expect(!SQLDefault(sql: sql).isCurrentTime, "\(sql)")
    }

    @Test("names that say the date of the last change, in any naming convention", arguments: [
        ("updated_at", true), ("UpdatedAt", true), ("UPDATED_AT", true), ("updatedAt", true), ("last_update", true),
        ("LastModified", true), ("LASTMODIFIED", true), ("modified", true), ("date_modified", true), ("modified_on", true),
        ("changed_at", true), ("edited", true), ("mtime", true), ("lastUpdated", true),
        ("created_at", false), ("CreatedAt", false), ("inserted", false), ("credited_at", false), ("stamp", false),
        ("date_added", false), ("timestamp", false),
    ])
    func updatedNames(name: String, isUpdated: Bool) {
        #expect(RoleMapping.saysUpdated(name) == isUpdated, "\(name)")
    }

    // MARK: - Mapping

    @Test("CURRENT_TIMESTAMP and datetime('now') columns: .createdAt, or .updatedAt by name; Date = Date() when NOT NULL, Date? = nil otherwise")
    func timestampRoles() throws {
        let source = try generate("""
            CREATE TABLE a (id INTEGER PRIMARY KEY, created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
                            updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP);
            CREATE TABLE b (id INTEGER PRIMARY KEY, CreatedAt TIMESTAMP DEFAULT (CURRENT_TIMESTAMP), UpdatedAt DATETIME DEFAULT (datetime('now')));
            CREATE TABLE c (id INTEGER PRIMARY KEY, added DATETIME NOT NULL DEFAULT (datetime('now', 'utc')),
                            last_update DATETIME NOT NULL DEFAULT current_timestamp);
            CREATE TABLE d (id INTEGER PRIMARY KEY, modified TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
                            created DATE DEFAULT CURRENT_DATE, stamp DEFAULT CURRENT_TIMESTAMP);
            """).source
        for line in [
            "    @Column(\"created_at\", role: .createdAt) var createdAt: Date = Date()",
            "    @Column(\"updated_at\", role: .updatedAt) var updatedAt: Date = Date()",
            "    @Column(\"CreatedAt\", role: .createdAt) var createdAt: Date? = nil",
            "    @Column(\"UpdatedAt\", role: .updatedAt) var updatedAt: Date? = nil",
            "    @Column(role: .createdAt) var added: Date = Date()",
            "    @Column(\"last_update\", role: .updatedAt) var lastUpdate: Date = Date()",
            // a TEXT column: typed Date, so that the default is not replaced by "" or NULL
            "    // declared TEXT: typed Date for its default strftime('%Y-%m-%dT%H:%M:%fZ', 'now') (stored as text)",
            "    @Column(role: .updatedAt) var modified: Date = Date()",
            "    @Column(role: .createdAt) var created: Date? = nil",
            // an untyped one too; the role is taken: mapped plainly
            "    // no declared type: typed Date for its default CURRENT_TIMESTAMP (stored as text)",
            "    // SQL default CURRENT_TIMESTAMP: set stamp before saving (created has the role .createdAt, and a model has one column per role)",
            "    @Column var stamp: Date? = nil",
        ] {
            #expect(lines(source).contains(line), "missing: \(line)")
        }
        #expect(!source.contains("1970"))
        #expect(!source.contains("is not a Swift literal"))
    }

    @Test("two columns that would take one role: the first gets it, the other is mapped plainly with a comment")
    func oneColumnPerRole() throws {
        let source = try generate("""
            CREATE TABLE t (id INTEGER PRIMARY KEY,
                            inserted_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
                            created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
                            modified DATETIME DEFAULT (datetime('now')),
                            updated_at DATETIME NOT NULL DEFAULT (datetime('now')),
                            lock_version INTEGER NOT NULL DEFAULT 0,
                            LockVersion INTEGER NOT NULL DEFAULT 0);
            """).source
        let model = try #require(classText("T", in: source))
        for line in [
            "    @Column(\"inserted_at\", role: .createdAt) var insertedAt: Date = Date()",
            "    // SQL default CURRENT_TIMESTAMP: set createdAt before saving (insertedAt has the role .createdAt, and a model has one column per role)",
            "    @Column(\"created_at\") var createdAt: Date? = nil",
            "    @Column(role: .updatedAt) var modified: Date? = nil",
            "    // SQL default datetime('now'): starts as Date(), when the object is made (modified has the role .updatedAt, and a model has one column per role)",
            "    @Column(\"updated_at\") var updatedAt: Date = Date()",
            "    @Column(\"lock_version\", role: .lockVersion) var lockVersion: Int = 0",
            "    // no role: lockVersion has the role .lockVersion, and a model has one column per role",
            "    @Column(\"LockVersion\") var lockVersion2: Int = 0",
        ] {
            #expect(lines(model).contains(line), "missing: \(line)")
        }
        for role in GeneratedRole.allCases where role != .deletedAt {
            #expect(model.components(separatedBy: "role: .\(role.rawValue))").count == 2, "one .\(role.rawValue)")
        }
    }

    @Test("no role where @Column(role:) cannot serve: numbers, keys, foreign keys, unique columns")
    func noRole() throws {
        let source = try generate("""
            CREATE TABLE parents (at DATETIME PRIMARY KEY DEFAULT CURRENT_TIMESTAMP);
            CREATE TABLE readings (name TEXT NOT NULL, at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (name, at));
            CREATE TABLE t (id INTEGER PRIMARY KEY,
                            epoch INTEGER DEFAULT CURRENT_TIMESTAMP,
                            seen REAL NOT NULL DEFAULT (datetime('now')),
                            created_at DATETIME NOT NULL UNIQUE DEFAULT CURRENT_TIMESTAMP,
                            parent_at DATETIME DEFAULT CURRENT_TIMESTAMP REFERENCES parents(at),
                            lock_version INTEGER,
                            version_text TEXT, "lock-version" TEXT NOT NULL DEFAULT '0');
            """).source
        #expect(roleDeclarations(source).isEmpty)
        for line in [
            "    // SQL default CURRENT_TIMESTAMP is not a Swift literal: set epoch before saving",
            "    @Column var epoch: Int? = nil",
            "    // no role .createdAt: unique, which @Column(role:) cannot also say",
            "    @Column(\"created_at\", unique: true) var createdAt: Date = Date()",
            "    @Column(\"lock_version\") var lockVersion: Int? = nil",
            "    @Column var at: Date = Date()",
        ] {
            #expect(lines(source).contains(line), "missing: \(line)")
        }
    }

    @Test("Rails' names without a default: created_at/created_on .createdAt, updated_at/updated_on .updatedAt, when typed as dates")
    func railsNames() throws {
        let source = try generate("""
            CREATE TABLE a (id INTEGER PRIMARY KEY, created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL);
            CREATE TABLE b (id INTEGER PRIMARY KEY, CreatedOn DATE, UPDATED_ON DATE DEFAULT NULL);
            CREATE TABLE c (id INTEGER PRIMARY KEY, created_at DATETIME DEFAULT '2000-01-01', updated_at TEXT NOT NULL);
            """).source
        #expect(try #require(classText("A", in: source)).contains("""
                @Column("created_at", role: .createdAt) var createdAt: Date = Date()
                @Column("updated_at", role: .updatedAt) var updatedAt: Date = Date()
            """))
        #expect(try #require(classText("B", in: source)).contains("""
                @Column("CreatedOn", role: .createdAt) var createdOn: Date? = nil
                @Column("UPDATED_ON", role: .updatedAt) var updatedOn: Date? = nil
            """))
        // A literal default, or a column that is not typed as a date: left as declared.
        #expect(try #require(classText("C", in: source)).contains("""
                @Column("created_at") var createdAt: Date? = Date(timeIntervalSince1970: 946684800)
                @Column("updated_at") var updatedAt: String = ""
            """))
    }

    @Test("lock_version: a NOT NULL integer gets .lockVersion, with its default")
    func lockVersion() throws {
        let source = try generate("""
            CREATE TABLE a (id INTEGER PRIMARY KEY, lock_version INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE b (id INTEGER PRIMARY KEY, LockVersion BIGINT NOT NULL);
            CREATE TABLE c (id INTEGER PRIMARY KEY, LOCK_VERSION INTEGER NOT NULL DEFAULT 3);
            """).source
        #expect(lines(source).contains("    @Column(\"lock_version\", role: .lockVersion) var lockVersion: Int = 0"))
        #expect(lines(source).contains("    @Column(\"LockVersion\", role: .lockVersion) var lockVersion: Int = 0"))
        #expect(lines(source).contains("    @Column(\"LOCK_VERSION\", role: .lockVersion) var lockVersion: Int = 3"))
    }

    @Test("deleted_at: .deletedAt only with --soft-delete (a comment says so otherwise), and only for a nullable date")
    func softDelete() throws {
        let sql = """
            CREATE TABLE a (id INTEGER PRIMARY KEY, deleted_at DATETIME);
            CREATE TABLE b (id INTEGER PRIMARY KEY, DiscardedAt TIMESTAMP);
            CREATE TABLE c (id INTEGER PRIMARY KEY, DELETED_ON DATE);
            CREATE TABLE d (id INTEGER PRIMARY KEY, deleted_at DATETIME NOT NULL);
            CREATE TABLE e (id INTEGER PRIMARY KEY, deleted_at TEXT);
            CREATE TABLE f (id INTEGER PRIMARY KEY, deleted_at DATETIME, discarded_at DATETIME);
            """
        let plain = try generate(sql)
        #expect(roleDeclarations(plain.source).isEmpty)
        #expect(plain.source.components(separatedBy: "    // a soft-delete date? `activeobjects-gen --soft-delete` makes it @Column(role: .deletedAt)\n").count == 6)
        #expect(lines(plain.source).contains("    @Column(\"deleted_at\") var deletedAt: Date? = nil"))

        let soft = try generate(sql, softDelete: true)
        #expect(soft.source.contains("// activeobjects-gen schema.sql --soft-delete\n"))
        #expect(!soft.source.contains("a soft-delete date?"))
        #expect(try #require(classText("A", in: soft.source)).contains("    @Column(\"deleted_at\", role: .deletedAt) var deletedAt: Date? = nil\n"))
        #expect(try #require(classText("B", in: soft.source)).contains("    @Column(\"DiscardedAt\", role: .deletedAt) var discardedAt: Date? = nil\n"))
        #expect(try #require(classText("C", in: soft.source)).contains("    @Column(\"DELETED_ON\", role: .deletedAt) var deletedOn: Date? = nil\n"))
        #expect(try #require(classText("D", in: soft.source)).contains("    @Column(\"deleted_at\") var deletedAt: Date = Date()\n"))
        #expect(try #require(classText("E", in: soft.source)).contains("    @Column(\"deleted_at\") var deletedAt: String? = nil\n"))
        #expect(try #require(classText("F", in: soft.source)).contains("""
                @Column("deleted_at", role: .deletedAt) var deletedAt: Date? = nil
                // no role: deletedAt has the role .deletedAt, and a model has one column per role
                @Column("discarded_at") var discardedAt: Date? = nil
            """))
    }

    @Test("--soft-delete on the command line: a flag without a value, named in the header and in --help")
    func softDeleteFlag() throws {
        #expect(try GeneratorCommand.parse(["s.sql", "--soft-delete"]).options.softDelete)
        #expect(try !GeneratorCommand.parse(["s.sql"]).options.softDelete)
        #expect(CommandResult(["s.sql", "--soft-delete=yes"]).status == 2)
        #expect(CommandResult(["--help"]).standardOutput.contains("--soft-delete"))
        let result = CommandResult([Fixture.path("timestamps.sql"), "--soft-delete"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("// activeobjects-gen timestamps.sql --soft-delete\n"))
    }

    @Test("a NOT NULL date column starts as Date(), never 1970, in every fixture")
    func neverNineteenSeventy() throws {
        let source = try generate("CREATE TABLE events (id INTEGER PRIMARY KEY, happened_at DATETIME NOT NULL, day DATE NOT NULL)").source
        #expect(source.contains("    @Column(\"happened_at\") var happenedAt: Date = Date()\n    @Column var day: Date = Date()\n"))
        for fixture in ["mappings", "ormapper", "shop", "music", "chinook", "northwind", "record-store", "timestamps"] {
            let output = try Generator.generate(schemaAt: Fixture.path("\(fixture).sql"))
            #expect(!output.source.contains("timeIntervalSince1970: 0)"), "\(fixture)")
        }
    }

    @Test("a join table whose other columns have roles is still a many-to-many: add(_:) stamps its rows")
    func joinTablesWithTimestamps() throws {
        let source = try generate("""
            CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE post_tags (post_id INTEGER NOT NULL REFERENCES posts(id), tag_id INTEGER NOT NULL REFERENCES tags(id),
                                    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
                                    updated_at DATETIME DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (post_id, tag_id));
            CREATE TABLE notes (id INTEGER PRIMARY KEY);
            CREATE TABLE note_tags (note_id INTEGER NOT NULL REFERENCES notes(id), tag_id INTEGER NOT NULL REFERENCES tags(id),
                                    added_at DATETIME NOT NULL);
            """).source
        #expect(source.contains("    var tags: HasManyThrough<Tag> { hasMany(through: \\PostTag.$postId, \\PostTag.$tagId) }\n"))
        #expect(source.contains("    var posts: HasManyThrough<Post> { hasMany(through: \\PostTag.$tagId, \\PostTag.$postId) }\n"))
        #expect(source.contains("/// A join table (many-to-many): see `Post.tags` and `Tag.posts`.\n"))
        // A date without a role: `add` could not fill it in.
        #expect(!source.contains("HasManyThrough<Note>"))
        #expect(!source.contains("through: \\NoteTag"))
    }

    @Test("ColumnRole is a reserved class name")
    func columnRoleReserved() {
        #expect(ModelPlan.className(for: "column_roles", taken: []).name == "ColumnRoleRecord")
    }

    @Test("a column named restore (ActiveObject.restore(), which undoes a soft delete) gets another property name")
    func restoreIsAMember() throws {
        let source = try generate("CREATE TABLE backups (id INTEGER PRIMARY KEY, restore TEXT)").source
        #expect(source.contains("    // `restore` is a member of ActiveObject\n    @Column(\"restore\") var restoreValue: String? = nil\n"))
    }

    // MARK: - The generated models, compiled and run

    static var committedPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("TimestampModels.swift").path
    }

    @Test("TimestampModels.swift is the generator's output for timestamps.sql (--soft-delete)")
    func committedModelsAreTheGeneratorsOutput() throws {
        var options = Generator.Options()
        options.softDelete = true
        let output = try Generator.generate(schemaAt: Fixture.path("timestamps.sql"), options: options)
        #expect(output.warnings.isEmpty)
        let expected = GeneratedTestModelsTests.wrapForTests(output.source, namespace: "TimestampModels")
        #expect(!expected.isEmpty)
        #expect(try String(contentsOfFile: Self.committedPath, encoding: .utf8) == expected,
                "regenerate TimestampModels.swift: write wrapForTests(output, namespace: \"TimestampModels\") to \(Self.committedPath)")
    }

    /// Runs `body` with a fresh in-memory database holding the tables of timestamps.sql, as an
    /// existing file would (made by the script, not by `createTable()`).
    private func withSchema<T>(_ body: (Database) throws -> T) throws -> T {
        let db = try Database.inMemory()
        defer { try? db.close() }
        for statement in SchemaSource.statements(in: try Fixture.text("timestamps.sql")) { try db.execute(statement.sql) }
        return try TimestampTestDB.$current.withValue(db) { try body(db) }
    }

    private func isNow(_ date: Date?, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        let distance = date.map { abs($0.timeIntervalSinceNow) } ?? .infinity
        #expect(distance < 10, "\(date.map { "\($0)" } ?? "nil") is not now: \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    }

    @Test("the generated models stamp created_at and updated_at with the current date, not 1970 nor the table's creation")
    func generatedModelsStampNow() throws {
        try withSchema { db in
            let author = TimestampModels.Author()
            author.name = "Ann"
            author.createdAt = Date(timeIntervalSince1970: 0)   // overwritten on insert: a NOT NULL .createdAt is always stamped
            try author.save()
            let id = try #require(author.id)
            isNow(author.createdAt, "createdAt held")
            isNow(author.updatedAt, "updatedAt held")
            let row = try #require(try db.rows("SELECT created_at, updated_at FROM authors WHERE id = ?", [id]).first)
            isNow(try row["created_at"] as Date, "created_at stored")
            isNow(try row["updated_at"] as Date, "updated_at stored")

            // A change moves updatedAt, never createdAt.
            let created = author.createdAt, updated = author.updatedAt
            Thread.sleep(forTimeInterval: 0.01)
            author.name = "Anne"
            try author.save()
            #expect(author.createdAt == created)
            #expect(author.updatedAt > updated)
            let loaded = try #require(try TimestampModels.Author.find(id: id))
            #expect(loaded.createdAt == created)
            #expect(abs(loaded.updatedAt.timeIntervalSince(author.updatedAt)) < 0.002)

            // Inside withoutTimestamps, the values set are written (an import).
            let imported = TimestampModels.Author()
            imported.name = "Old"
            imported.createdAt = Date(timeIntervalSince1970: 1_000_000_000)
            imported.updatedAt = Date(timeIntervalSince1970: 1_000_000_000)
            try ActiveObject.withoutTimestamps { try imported.save() }
            let importedID = try #require(imported.id)
            #expect(try TimestampModels.Author.find(id: importedID)?.createdAt == Date(timeIntervalSince1970: 1_000_000_000))
        }
    }

    @Test("a row another tool inserts gets the schema's CURRENT_TIMESTAMP, read back as the current date")
    func rowsOfOtherToolsReadNow() throws {
        try withSchema { db in
            try db.execute("INSERT INTO authors (name) VALUES ('Bob')")
            let bob = try #require(try TimestampModels.Author.findAll().first)
            isNow(bob.createdAt, "created by SQLite's default")
            isNow(bob.updatedAt, "updated by SQLite's default")
        }
    }

    @Test("nullable and TEXT timestamp columns are stamped; the second creation date starts as the moment the object is made")
    func postStamps() throws {
        try withSchema { db in
            let post = TimestampModels.Post()
            post.title = "Hello"
            #expect(post.createdAt == nil && post.lastModified == nil)
            isNow(post.inserted, "a NOT NULL date without the role")
            try post.save()
            isNow(post.createdAt, "CreatedAt")
            isNow(post.lastModified, "LastModified (TEXT)")
            let id = try #require(post.id)
            let row = try #require(try db.rows("SELECT \"CreatedAt\", LastModified, typeof(LastModified) AS kind FROM posts WHERE id = ?", [id]).first)
            isNow(try row["CreatedAt"] as Date, "CreatedAt stored")
            isNow(try row["LastModified"] as Date, "LastModified stored")
            #expect(try row["kind"] as String == "text")

            let event = TimestampModels.Event()
            isNow(event.happenedAt, "happened_at, NOT NULL without a default")
            try event.save()
            isNow(try TimestampModels.Event.findAll().first?.happenedAt, "happened_at stored")
        }
    }

    @Test("the generated soft delete and lock version work on the generated models")
    func softDeleteAndLockVersion() throws {
        try withSchema { db in
            let post = TimestampModels.Post()
            post.title = "Draft"
            try post.save()
            #expect(post.lockVersion == 0)
            post.title = "Final"
            try post.save()
            #expect(post.lockVersion == 1)

            // A stale copy cannot overwrite the change.
            let postID = try #require(post.id)
            let stale = try #require(try TimestampModels.Post.find(id: postID))
            post.title = "Newer"
            try post.save()
            stale.title = "Stale"
            #expect(throws: ActiveObjectError.self) { try stale.save() }

            try post.delete()
            isNow(post.deletedAt, "deleted_at")
            #expect(try TimestampModels.Post.findAll().isEmpty)
            #expect(try db.scalar("SELECT count(*) FROM posts WHERE deleted_at IS NOT NULL") as Int? == 1)
        }
    }

    @Test("HasManyThrough.add stamps a generated join row's created_at (DEFAULT CURRENT_TIMESTAMP) with the current date")
    func joinRowStamped() throws {
        try withSchema { db in
            let post = TimestampModels.Post()
            post.title = "Tagged"
            let tag = TimestampModels.Tag()
            tag.name = "swift"
            try post.tags.add(tag)       // saves both, then inserts the join row
            #expect(try post.tags.all().map(\.name) == ["swift"])
            let join = try #require(try TimestampModels.PostTag.findAll().first)
            isNow(join.createdAt, "the join model's createdAt")
            isNow(try db.scalar("SELECT created_at FROM post_tags") as Date?, "post_tags.created_at stored")
            #expect(try tag.posts.count() == 1)
        }
    }
}
