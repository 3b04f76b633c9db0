import Foundation
import Testing
@testable import ActiveObjects

final class MigPerson: SchemaTestModel {
    @Column var name: String = ""
    @Column var age: Int = 0
}

final class MigParent: SchemaTestModel {
    @Column var title: String = ""
}

final class MigChild: SchemaTestModel {
    @Column(references: MigParent.self, onDelete: .cascade) var migParentId: Int64? = nil
}

/// Versioned migrations: run once, in order, each atomic with its bookkeeping row.
@Suite struct MigratorTests {
    /// The steps' SQL found in a trace (the statements that mention one of `markers`).
    static func stepSQL(_ statements: [String], _ markers: [String]) -> [String] {
        statements.filter { sql in markers.contains { sql.contains($0) } }
    }

    @Test func stepsRunOnceInRegistrationOrder() throws {
        let fx = try SchemaFixture()
        let ran = Locked<[String]>([])
        var migrator = Migrator()
        migrator.register("b-create") { db in
            ran.withLock { $0.append("b-create") }
            try db.execute("CREATE TABLE mig_t1 (id INTEGER PRIMARY KEY, x INTEGER)")
        }
        migrator.register("a-insert") { db in
            ran.withLock { $0.append("a-insert") }
            try db.execute("INSERT INTO mig_t1 (x) VALUES (1)")
        }
        migrator.register("c-index") { db in
            ran.withLock { $0.append("c-index") }
            try db.execute("CREATE INDEX mig_t1_x ON mig_t1(x)")
        }
        #expect(migrator.registeredMigrations == ["b-create", "a-insert", "c-index"])

        try fx.run { try migrator.migrate(fx.db) }
        // Registration order, not name order.
        #expect(ran.current == ["b-create", "a-insert", "c-index"])
        #expect(try migrator.appliedMigrations(fx.db) == ["b-create", "a-insert", "c-index"])
        #expect(try count(fx.db, "SELECT count(*) FROM mig_t1") == 1)
        let recorded = try fx.db.rows("SELECT name, applied_at FROM schema_migrations ORDER BY rowid")
        #expect(recorded.count == 3)
        for row in recorded {
            let appliedAt: Date = try row["applied_at"]
            #expect(abs(appliedAt.timeIntervalSinceNow) < 600)
        }

        // The second run runs nothing: no step is called and no step SQL is traced.
        fx.trace.removeAll()
        try fx.run { try migrator.migrate(fx.db) }
        #expect(ran.current == ["b-create", "a-insert", "c-index"])
        let second = fx.trace.statements
        #expect(Self.stepSQL(second, ["mig_t1", "INSERT INTO schema_migrations"]).isEmpty, "\(second)")
        #expect(!second.contains { $0.hasPrefix("BEGIN") }, "\(second)")
        #expect(try count(fx.db, "SELECT count(*) FROM mig_t1") == 1)
        #expect(try migrator.appliedMigrations(fx.db) == ["b-create", "a-insert", "c-index"])
    }

    @Test func runOnceHoldsAcrossReopeningTheFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("mig.sqlite")
        let calls = Locked(0)
        func makeMigrator() -> Migrator {
            var migrator = Migrator()
            migrator.register("001") { db in
                calls.withLock { $0 += 1 }
                try db.execute("CREATE TABLE mig_file (id INTEGER PRIMARY KEY)")
            }
            return migrator
        }
        do {
            let db = try Database(path: path)
            try makeMigrator().migrate(db)
            try db.close()
        }
        let db = try Database(path: path)
        try makeMigrator().migrate(db)
        #expect(calls.current == 1)
        #expect(try makeMigrator().appliedMigrations(db) == ["001"])
    }

    @Test func aFailingStepRollsBackItsDDLIsNotRecordedAndStopsTheRun() throws {
        let fx = try SchemaFixture()
        let laterRan = Locked(false)
        var migrator = Migrator()
        migrator.register("001-ok") { db in try db.execute("CREATE TABLE mig_ok (id INTEGER PRIMARY KEY)") }
        migrator.register("002-broken") { db in
            try db.execute("CREATE TABLE mig_broken (id INTEGER PRIMARY KEY)")
            try db.execute("INSERT INTO mig_ok DEFAULT VALUES")
            throw TestFailure(message: "boom")
        }
        migrator.register("003-later") { db in
            laterRan.withLock { $0 = true }
            try db.execute("CREATE TABLE mig_later (id INTEGER PRIMARY KEY)")
        }

        let error = try fx.run {
            expectActiveObjectError({ try migrator.migrate(fx.db) }, matches: \.isMigrationFailed)
        }
        guard case let .migrationFailed(name, underlying)? = error else {
            Issue.record("expected migrationFailed, got \(String(describing: error))")
            return
        }
        #expect(name == "002-broken")
        #expect(underlying as? TestFailure == TestFailure(message: "boom"))
        #expect("\(error!)".contains("002-broken"))

        #expect(try tableExists(fx.db, "mig_ok"))
        #expect(try !tableExists(fx.db, "mig_broken"))
        #expect(try count(fx.db, "SELECT count(*) FROM mig_ok") == 0)
        #expect(try !tableExists(fx.db, "mig_later"))
        #expect(!laterRan.current)
        #expect(try migrator.appliedMigrations(fx.db) == ["001-ok"])
        #expect(try count(fx.db, "SELECT count(*) FROM schema_migrations WHERE name = '002-broken'") == 0)
        #expect(!fx.db.isInTransaction)
    }

    @Test func aFailingStepRunsAgainOnTheNextMigrateOnceFixed() throws {
        let fx = try SchemaFixture()
        let shouldFail = Locked(true)
        var migrator = Migrator()
        migrator.register("001") { db in
            try db.execute("CREATE TABLE mig_retry (id INTEGER PRIMARY KEY)")
            if shouldFail.current { throw TestFailure() }
        }
        migrator.register("002") { db in try db.execute("INSERT INTO mig_retry DEFAULT VALUES") }
        try fx.run { expectActiveObjectError({ try migrator.migrate(fx.db) }, matches: \.isMigrationFailed) }
        #expect(try migrator.appliedMigrations(fx.db) == [])
        shouldFail.withLock { $0 = false }
        try fx.run { try migrator.migrate(fx.db) }
        #expect(try migrator.appliedMigrations(fx.db) == ["001", "002"])
        #expect(try count(fx.db, "SELECT count(*) FROM mig_retry") == 1)
    }

    @Test func aFailingSQLStatementIsReportedWithTheStepAndTheDatabaseError() throws {
        let fx = try SchemaFixture()
        var migrator = Migrator()
        migrator.register("001-typo") { db in try db.execute("CREATE TABLEX nope (id)") }
        let error = try fx.run {
            expectActiveObjectError({ try migrator.migrate(fx.db) }, matches: \.isMigrationFailed)
        }
        guard case let .migrationFailed(name, underlying)? = error else { return }
        #expect(name == "001-typo")
        #expect((underlying as? DatabaseError)?.resultCode == .error)
    }

    @Test func duplicateNamesThrowBeforeAnythingRuns() throws {
        let fx = try SchemaFixture()
        let ran = Locked(0)
        var migrator = Migrator()
        migrator.register("001") { db in ran.withLock { $0 += 1 }; try db.execute("CREATE TABLE mig_dup1 (id INTEGER PRIMARY KEY)") }
        migrator.register("002") { db in ran.withLock { $0 += 1 } }
        migrator.register("001") { db in ran.withLock { $0 += 1 } }

        let error = try fx.run {
            expectActiveObjectError({ try migrator.migrate(fx.db) }, matches: \.isDuplicateMigration)
        }
        if case let .duplicateMigration(name)? = error { #expect(name == "001") }
        #expect(ran.current == 0)
        #expect(try !tableExists(fx.db, "mig_dup1"))
        #expect(try !tableExists(fx.db, "schema_migrations"))
    }

    @Test func duplicatesAreRefusedEvenWhenTheFirstAlreadyRan() throws {
        let fx = try SchemaFixture()
        var first = Migrator()
        first.register("001") { db in try db.execute("CREATE TABLE mig_dup2 (id INTEGER PRIMARY KEY)") }
        try first.migrate(fx.db)

        let ran = Locked(0)
        var second = first
        second.register("002") { _ in ran.withLock { $0 += 1 } }
        second.register("001") { _ in ran.withLock { $0 += 1 } }
        expectActiveObjectError({ try second.migrate(fx.db) }, matches: \.isDuplicateMigration)
        #expect(ran.current == 0)
        #expect(try second.appliedMigrations(fx.db) == ["001"])
    }

    @Test func aStepRegisteredLaterRunsEvenBetweenExistingNames() throws {
        let fx = try SchemaFixture()
        let ran = Locked<[String]>([])
        func step(_ name: String) -> (Database) throws -> Void {
            { db in
                ran.withLock { $0.append(name) }
                try db.execute("INSERT INTO mig_log (name) VALUES (?)", [name])
            }
        }
        var v1 = Migrator()
        v1.register("000-log") { db in try db.execute("CREATE TABLE mig_log (id INTEGER PRIMARY KEY, name TEXT)") }
        v1.register("001", step("001"))
        v1.register("003", step("003"))
        try v1.migrate(fx.db)
        #expect(ran.current == ["001", "003"])

        // The next release inserts 002 between existing names and appends 004.
        var v2 = Migrator()
        v2.register("000-log") { _ in Issue.record("000-log ran twice") }
        v2.register("001", step("001"))
        v2.register("002", step("002"))
        v2.register("003", step("003"))
        v2.register("004", step("004"))
        try v2.migrate(fx.db)
        #expect(ran.current == ["001", "003", "002", "004"])
        // appliedMigrations lists the order in which steps ran.
        #expect(try v2.appliedMigrations(fx.db) == ["000-log", "001", "003", "002", "004"])
        #expect(try fx.db.rows("SELECT name FROM mig_log ORDER BY id").map { try $0["name"] as String }
                == ["001", "003", "002", "004"])
    }

    @Test func appliedMigrationsOfAFreshDatabaseIsEmpty() throws {
        let fx = try SchemaFixture()
        var migrator = Migrator()
        migrator.register("001") { _ in }
        #expect(try migrator.appliedMigrations(fx.db) == [])
        try migrator.migrate(fx.db)
        #expect(try migrator.appliedMigrations(fx.db) == ["001"])
        // A migrator that knows fewer steps still lists what the database has applied.
        #expect(try Migrator().appliedMigrations(fx.db) == ["001"])
    }

    @Test func eachStepRunsInItsOwnTransaction() throws {
        let fx = try SchemaFixture()
        let inTransaction = Locked<[Bool]>([])
        var migrator = Migrator()
        migrator.register("001") { db in inTransaction.withLock { $0.append(db.isInTransaction) } }
        migrator.register("002") { db in inTransaction.withLock { $0.append(db.isInTransaction) } }
        fx.trace.removeAll()
        try migrator.migrate(fx.db)
        #expect(inTransaction.current == [true, true])
        let statements = fx.trace.statements
        #expect(statements.filter { $0.hasPrefix("BEGIN") }.count == 2, "\(statements)")
        #expect(statements.filter { $0.hasPrefix("COMMIT") }.count == 2, "\(statements)")
    }

    @Test func aStepLeavingAForeignKeyViolationFailsAndRollsBack() throws {
        let fx = try SchemaFixture()
        var migrator = Migrator()
        migrator.register("001-tables") { db in
            try MigParent.createTable(in: db)
            try MigChild.createTable(in: db)
        }
        migrator.register("002-orphan") { db in
            try db.execute("INSERT INTO mig_parent (id, title) VALUES (1, 'p')")
            try db.execute("INSERT INTO mig_child (id, migParentId) VALUES (1, 1)")
            try db.execute("INSERT INTO mig_child (id, migParentId) VALUES (2, 99)")   // no parent 99
        }
        migrator.register("003-after") { db in try db.execute("CREATE TABLE mig_after (id INTEGER PRIMARY KEY)") }

        let error = try fx.run {
            expectActiveObjectError({ try migrator.migrate(fx.db) }, matches: \.isMigrationFailed)
        }
        if case let .migrationFailed(name, underlying)? = error {
            #expect(name == "002-orphan")
            #expect((underlying as? DatabaseError)?.resultCode == .constraint, "\(underlying)")
        }
        #expect(try migrator.appliedMigrations(fx.db) == ["001-tables"])
        #expect(try count(fx.db, "SELECT count(*) FROM mig_parent") == 0)
        #expect(try count(fx.db, "SELECT count(*) FROM mig_child") == 0)
        #expect(try !tableExists(fx.db, "mig_after"))
        #expect(try fx.db.rows("PRAGMA foreign_key_check").isEmpty)
        // Enforcement is back on after the run.
        #expect(try fx.db.scalar("PRAGMA foreign_keys") == 1)
    }

    @Test func aStepMayRebuildAParentTableWhileForeignKeysAreDeferredToTheCheck() throws {
        let fx = try SchemaFixture()
        var migrator = Migrator()
        migrator.register("001") { db in
            try MigParent.createTable(in: db)
            try MigChild.createTable(in: db)
            try db.execute("INSERT INTO mig_parent (id, title) VALUES (1, 'p')")
            try db.execute("INSERT INTO mig_child (id, migParentId) VALUES (1, 1)")
        }
        // Replace the parent table by hand (SQLite's 12-step procedure): legal because the
        // foreign keys hold again when the step commits.
        migrator.register("002-rebuild-parent") { db in
            try db.execute("CREATE TABLE mig_parent_new (id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', extra INTEGER)")
            try db.execute("INSERT INTO mig_parent_new (id, title) SELECT id, title FROM mig_parent")
            try db.execute("DROP TABLE mig_parent")
            try db.execute("ALTER TABLE mig_parent_new RENAME TO mig_parent")
        }
        try fx.run { try migrator.migrate(fx.db) }
        #expect(try migrator.appliedMigrations(fx.db) == ["001", "002-rebuild-parent"])
        #expect(try count(fx.db, "SELECT count(*) FROM mig_child") == 1)
        #expect(try columnNames(fx.db, "mig_parent") == ["id", "title", "extra"])
        #expect(try fx.db.scalar("PRAGMA foreign_keys") == 1)
    }

    @Test func createTableInsideAStep() throws {
        let fx = try SchemaFixture()
        var migrator = Migrator()
        migrator.register("001-create-person") { db in try MigPerson.createTable(in: db) }
        migrator.register("002-index-age") { db in try db.execute("CREATE INDEX mig_person_age ON mig_person(age)") }
        migrator.register("003-seed") { db in
            // Models work inside steps too.
            let joe = MigPerson(); joe.name = "Joe"; joe.age = 30
            try joe.save()
        }
        try fx.run { try migrator.migrate(fx.db) }
        #expect(try columnNames(fx.db, "mig_person") == ["id", "name", "age"])
        #expect(try indexList(fx.db, "mig_person").map(\.name) == ["mig_person_age"])
        try fx.run { () throws in
            #expect(try MigPerson.countAll() == 1)
            #expect(try MigPerson.findFirst(where: ["name": "Joe"])?.age == 30)
        }
    }

    @Test func migrateOnAClosedDatabaseThrows() throws {
        let fx = try SchemaFixture()
        var migrator = Migrator()
        migrator.register("001") { _ in Issue.record("ran on a closed database") }
        try fx.db.close()
        #expect(throws: (any Error).self) { try migrator.migrate(fx.db) }
    }
}
