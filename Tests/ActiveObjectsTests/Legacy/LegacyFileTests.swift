import Foundation
import Testing
@testable import ActiveObjects

// Models mapped onto tables that the seed libraries wrote, as they wrote them.

/// OCActiveObjects: `objectId INTEGER PRIMARY KEY`, property names as columns, numbers and
/// dates declared `FLOAT`, dates as seconds since 1970.
final class LegacyOCPerson: SchemaTestModel {
    override class var tableName: String { "Person" }
    override class var primaryKey: String { "objectId" }
    override class var dateStrategy: DateStrategy? { .unixSeconds }
    @Column var name: String? = nil
    @Column var age: Int = 0
    @Column var income: Double = 0
    @Column var birthdate: Date? = nil
}

/// FMPersisting: UPPER_SNAKE columns, key `ID`, REAL dates.
final class LegacyFMAlbum: SchemaTestModel {
    override class var tableName: String { "ALBUM" }
    override class var primaryKey: String { "ID" }
    override class var columnNaming: ColumnNaming { .upperSnakeCase }
    override class var dateStrategy: DateStrategy? { .unixSeconds }
    @Column var title: String = ""
    @Column var artistName: String? = nil
    @Column var trackCount: Int = 0
    @Column var releaseDate: Date? = nil
    @Column var lastPlayedDate: Date? = nil
}

/// The next release of the FMPersisting model adds a property.
final class LegacyFMAlbumV2: SchemaTestModel {
    override class var tableName: String { "ALBUM" }
    override class var primaryKey: String { "ID" }
    override class var columnNaming: ColumnNaming { .upperSnakeCase }
    override class var dateStrategy: DateStrategy? { .unixSeconds }
    @Column var title: String = ""
    @Column var artistName: String? = nil
    @Column var trackCount: Int = 0
    @Column var releaseDate: Date? = nil
    @Column var lastPlayedDate: Date? = nil
    @Column var playCount: Int = 0
}

/// ormapper (iOS): key `key`, dates as `yyyyMMddHHmmss` text, snake_case columns.
final class LegacyORPerson: SchemaTestModel {
    override class var tableName: String { "person" }
    override class var primaryKey: String { "key" }
    override class var columnNaming: ColumnNaming { .snakeCase }
    override class var dateStrategy: DateStrategy? { .compactText }
    @Column var name: String = ""
    @Column var groupId: Int64? = nil
    @Column var birthday: Date? = nil
    @Column var createdAt: Date = Date(timeIntervalSince1970: 0)
}

final class LegacyORGroup: SchemaTestModel {
    override class var tableName: String { "groups" }
    override class var primaryKey: String { "key" }
    override class var dateStrategy: DateStrategy? { .compactText }
    @Column var name: String = ""
    var people: HasMany<LegacyORPerson> { hasMany(\.$groupId) }
}

extension LegacyORPerson {
    var group: BelongsTo<LegacyORGroup> { belongsTo(\.$groupId) }
}

/// A model for the template-database test.
final class LegacyTemplateCity: SchemaTestModel {
    override class var tableName: String { "city" }
    @Column var name: String = ""
    @Column var population: Int = 0
    @Column var country: String = "CH"   // added by the app's current release
}

/// Tables written the way OCActiveObjects, FMPersisting and ormapper wrote them.
@Suite struct LegacyFileTests {
    static let utc: TimeZone = TimeZone(identifier: "UTC")!

    static func date(_ y: Int, _ mo: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0, _ s: Int = 0) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        return calendar.date(from: DateComponents(year: y, month: mo, day: d, hour: h, minute: mi, second: s))!
    }

    /// Creates a database file with raw SQL (default options, no models) and closes it.
    static func buildFile(_ path: String, _ statements: [(String, [any ColumnValue])]) throws {
        var options = Database.Options()
        options.journalMode = .delete
        let db = try Database(path: path, options: options)
        for (sql, arguments) in statements { try db.execute(sql, arguments) }
        try db.close()
    }

    // MARK: OCActiveObjects

    @Test func ocActiveObjectsTable() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("oc.sqlite")
        let birth = 433_036_800.25   // 1983-09-21 00:00:00.25 UTC
        try Self.buildFile(path, [
            ("CREATE TABLE IF NOT EXISTS Person (objectId INTEGER PRIMARY KEY, name TEXT, age INTEGER, income FLOAT, birthdate FLOAT)", []),
            ("INSERT INTO Person (name, age, income, birthdate) VALUES (?, ?, ?, ?)", ["Joe", 30, 52_000.5, birth]),
            ("INSERT INTO Person (name, age, income, birthdate) VALUES (?, ?, ?, ?)", [nil as String?, 41, 0.0, nil as Double?]),
        ])

        let fx = try SchemaFixture(path: path)
        try fx.run {
            let people = try LegacyOCPerson.all.order(by: "objectId").all()
            #expect(people.map(\.id) == [1, 2])
            #expect(people.map(\.name) == ["Joe", nil])
            #expect(people.map(\.age) == [30, 41])
            #expect(people[0].income == 52_000.5)
            #expect(people[0].birthdate == Date(timeIntervalSince1970: birth))
            #expect(people[1].birthdate == nil)
            #expect(try LegacyOCPerson.find(id: 1)?.name == "Joe")
            #expect(try LegacyOCPerson.find(where: ["objectId": 2]).count == 1)

            // New rows in the table's own format: REAL seconds.
            let ann = LegacyOCPerson()
            ann.name = "Ann"; ann.age = 25; ann.birthdate = Date(timeIntervalSince1970: 700_000_000.5)
            try ann.save()
            #expect(ann.id == 3)
            // Updates too.
            people[1].birthdate = Date(timeIntervalSince1970: 1_000)
            try people[1].save()
        }
        let stored = try fx.db.rows("SELECT objectId, typeof(birthdate) AS t, birthdate FROM Person ORDER BY objectId")
        #expect(try stored.map { try $0["t"] as String } == ["real", "real", "real"])
        #expect(try stored[2]["birthdate"] as Double == 700_000_000.5)
        #expect(try stored[1]["birthdate"] as Double == 1_000)
        // Nothing was added to or changed in the table.
        #expect(try columnNames(fx.db, "Person") == ["objectId", "name", "age", "income", "birthdate"])

        // migrate() on the legacy table finds nothing to add.
        let statements = try fx.statements { try LegacyOCPerson.migrate() }
        #expect(!statements.contains { $0.hasPrefix("ALTER") || $0.hasPrefix("CREATE TABLE") }, "\(statements)")
        #expect(try masterSQL(fx.db, "Person") == ["table Person: CREATE TABLE Person (objectId INTEGER PRIMARY KEY, name TEXT, age INTEGER, income FLOAT, birthdate FLOAT)"])
    }

    @Test func rebuildingALegacyTableKeepsItsKeysAndDateFormat() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("oc-rebuild.sqlite")
        try Self.buildFile(path, [
            ("CREATE TABLE Person (objectId INTEGER PRIMARY KEY, name TEXT, age INTEGER, income FLOAT, birthdate FLOAT, nickname TEXT)", []),
            ("INSERT INTO Person (objectId, name, age, income, birthdate, nickname) VALUES (?, ?, ?, ?, ?, ?)",
             [7, "Joe", 30, 1.5, 433_036_800.25, "J"]),
            ("INSERT INTO Person (objectId, name, age, income, birthdate, nickname) VALUES (?, ?, ?, ?, ?, ?)",
             [42, nil as String?, 41, 0.0, nil as Double?, nil as String?]),
        ])
        let fx = try SchemaFixture(path: path)
        // The model does not declare `nickname`, and says REAL where the table says FLOAT.
        try fx.run { try LegacyOCPerson.migrate(rebuildingTable: true) }
        #expect(try columnNames(fx.db, "Person") == ["objectId", "name", "age", "income", "birthdate"])
        let rows = try fx.db.rows("SELECT objectId, name, age, income, typeof(birthdate) AS t, birthdate FROM Person ORDER BY objectId")
        #expect(rows.map(\.values) == [
            [7, "Joe", 30, 1.5, "real", 433_036_800.25],
            [42, nil, 41, 0.0, "null", nil],
        ])
        try fx.run { () throws in
            #expect(try LegacyOCPerson.find(id: 7)?.birthdate == Date(timeIntervalSince1970: 433_036_800.25))
        }
    }

    // MARK: FMPersisting

    @Test func fmPersistingTable() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("fm.sqlite")
        let release = Self.date(1969, 9, 26).timeIntervalSince1970   // before 1970: negative
        try Self.buildFile(path, [
            ("CREATE TABLE ALBUM (ID INTEGER PRIMARY KEY AUTOINCREMENT, TITLE TEXT NOT NULL, ARTIST_NAME TEXT, TRACK_COUNT INTEGER, RELEASE_DATE REAL, LAST_PLAYED_DATE REAL)", []),
            ("INSERT INTO ALBUM (TITLE, ARTIST_NAME, TRACK_COUNT, RELEASE_DATE, LAST_PLAYED_DATE) VALUES (?, ?, ?, ?, ?)",
             ["Abbey Road", "The Beatles", 17, release, 1_400_000_000.125]),
            ("INSERT INTO ALBUM (TITLE, ARTIST_NAME, TRACK_COUNT, RELEASE_DATE, LAST_PLAYED_DATE) VALUES (?, ?, ?, ?, ?)",
             ["Untitled", nil as String?, 0, nil as Double?, nil as Double?]),
        ])

        let fx = try SchemaFixture(path: path)
        try fx.run {
            let albums = try LegacyFMAlbum.all.order(by: \.$title).all()
            #expect(albums.map(\.title) == ["Abbey Road", "Untitled"])
            #expect(albums.map(\.id) == [1, 2])
            #expect(albums[0].artistName == "The Beatles")
            #expect(albums[0].trackCount == 17)
            #expect(albums[0].releaseDate == Self.date(1969, 9, 26))
            #expect(albums[0].lastPlayedDate == Date(timeIntervalSince1970: 1_400_000_000.125))
            #expect(albums[1].releaseDate == nil)
            #expect(try LegacyFMAlbum.where(\.$trackCount > 10).pluck(\.$title) == ["Abbey Road"])
            #expect(try LegacyFMAlbum.find(where: ["ARTIST_NAME": "The Beatles"]).count == 1)
            #expect(try LegacyFMAlbum.find(where: ["artistName": "The Beatles"]).count == 1)

            let album = LegacyFMAlbum()
            album.title = "Blue"; album.trackCount = 10; album.releaseDate = Date(timeIntervalSince1970: 44_000_000)
            try album.save()
            #expect(album.id == 3)
            albums[1].lastPlayedDate = Date(timeIntervalSince1970: 1_500_000_000)
            try albums[1].save()
        }
        let stored = try fx.db.rows("SELECT ID, typeof(RELEASE_DATE) AS r, RELEASE_DATE, typeof(LAST_PLAYED_DATE) AS l, LAST_PLAYED_DATE FROM ALBUM ORDER BY ID")
        #expect(try stored[2]["r"] as String == "real")
        #expect(try stored[2]["RELEASE_DATE"] as Double == 44_000_000)
        #expect(try stored[2]["l"] as String == "null")
        #expect(try stored[1]["l"] as String == "real")
        #expect(try stored[1]["LAST_PLAYED_DATE"] as Double == 1_500_000_000)
        // AUTOINCREMENT bookkeeping followed the model's inserts.
        #expect(try count(fx.db, "SELECT seq FROM sqlite_sequence WHERE name = 'ALBUM'") == 3)

        // The next release adds a column in the table's naming convention.
        try fx.run { try LegacyFMAlbumV2.migrate() }
        #expect(try columnNames(fx.db, "ALBUM") == ["ID", "TITLE", "ARTIST_NAME", "TRACK_COUNT", "RELEASE_DATE", "LAST_PLAYED_DATE", "PLAY_COUNT"])
        try fx.run { () throws in #expect(try LegacyFMAlbumV2.all.pluck(\.$playCount) == [0, 0, 0]) }
    }

    // MARK: ormapper

    @Test func ormapperTable() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("orm.sqlite")
        try Self.buildFile(path, [
            ("CREATE TABLE groups (key INTEGER PRIMARY KEY, name TEXT)", []),
            ("CREATE TABLE person (key INTEGER PRIMARY KEY, name TEXT, group_id INTEGER, birthday TEXT, created_at TEXT)", []),
            ("INSERT INTO groups (key, name) VALUES (10, 'Crew')", []),
            ("INSERT INTO person (key, name, group_id, birthday, created_at) VALUES (?, ?, ?, ?, ?)",
             [1, "Joe", 10, "19830921101112", "20140923101112"]),
            ("INSERT INTO person (key, name, group_id, birthday, created_at) VALUES (?, ?, ?, ?, ?)",
             [2, "Ann", nil as Int?, nil as String?, "20150101000000"]),
        ])

        let fx = try SchemaFixture(path: path)
        try fx.run {
            let people = try LegacyORPerson.all.order(by: "key").all()
            #expect(people.map(\.id) == [1, 2])
            #expect(people[0].birthday == Self.date(1983, 9, 21, 10, 11, 12))
            #expect(people[0].createdAt == Self.date(2014, 9, 23, 10, 11, 12))
            #expect(people[1].birthday == nil)
            #expect(try people[0].group.get()?.name == "Crew")
            let crew = try #require(try LegacyORGroup.find(id: 10))
            #expect(try crew.people.all().map(\.name) == ["Joe"])

            let bob = LegacyORPerson()
            bob.name = "Bob"
            bob.birthday = Self.date(1990, 1, 2, 3, 4, 5)
            bob.createdAt = Self.date(2024, 12, 31, 23, 59, 58)
            try crew.people.add(bob)
            #expect(bob.id == 3)
        }
        let stored = try fx.db.rows("SELECT typeof(birthday) AS tb, birthday, typeof(created_at) AS tc, created_at, group_id FROM person WHERE name = 'Bob'")
        #expect(stored.count == 1)
        #expect(try stored[0]["tb"] as String == "text")
        #expect(try stored[0]["birthday"] as String == "19900102030405")
        #expect(try stored[0]["tc"] as String == "text")
        #expect(try stored[0]["created_at"] as String == "20241231235958")
        #expect(try stored[0]["group_id"] as Int == 10)
        #expect(try columnNames(fx.db, "person") == ["key", "name", "group_id", "birthday", "created_at"])
    }

    /// ormapper also declared date columns `DATETIME` (NUMERIC affinity): the compact text it
    /// bound is stored as an INTEGER there, and rows written through the model must match.
    @Test func ormapperDatetimeColumnsStoreWhatTheOldAppStored() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("orm-datetime.sqlite")
        try Self.buildFile(path, [
            ("CREATE TABLE person (key INTEGER PRIMARY KEY, name TEXT, group_id INTEGER, birthday DATETIME, created_at DATETIME)", []),
            ("INSERT INTO person (name, birthday, created_at) VALUES (?, ?, ?)", ["Joe", "19830921101112", "20140923101112"]),
        ])
        let fx = try SchemaFixture(path: path)
        try fx.run {
            let joe = try #require(try LegacyORPerson.find(id: 1))
            #expect(joe.birthday == Self.date(1983, 9, 21, 10, 11, 12))
            #expect(joe.createdAt == Self.date(2014, 9, 23, 10, 11, 12))
            let ann = LegacyORPerson()
            ann.name = "Ann"; ann.birthday = Self.date(2001, 2, 3, 4, 5, 6); ann.createdAt = Self.date(2020, 1, 1)
            try ann.save()
            // Reading back what it wrote.
            let annID = try #require(ann.id)
            let again = try #require(try LegacyORPerson.find(id: annID))
            #expect(again.birthday == Self.date(2001, 2, 3, 4, 5, 6))
        }
        let rows = try fx.db.rows("SELECT typeof(birthday) AS t, CAST(birthday AS TEXT) AS b FROM person ORDER BY key")
        #expect(try rows.map { try $0["t"] as String } == ["integer", "integer"])
        #expect(try rows.map { try $0["b"] as String } == ["19830921101112", "20010203040506"])
    }

    // MARK: Template databases

    @Test func templateDatabaseIsCopiedOnceAndNeverOverwritten() throws {
        let dir = try TemporaryDirectory()
        let template = dir.path("bundled.sqlite")
        let destination = dir.path("user.sqlite")
        try Self.buildFile(template, [
            ("CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', population INTEGER NOT NULL DEFAULT 0)", []),
            ("INSERT INTO city (name, population) VALUES ('Bern', 134000), ('Basel', 173000)", []),
        ])
        let templateBytes = try fileBytes(template)

        // First launch: copied, then migrated (a new column) and written to.
        do {
            let db = try Database(path: destination, copyingTemplateAt: template)
            let fx = SchemaFixture(database: db, trace: TraceRecorder())
            try fx.run {
                try LegacyTemplateCity.migrate()
                #expect(try LegacyTemplateCity.all.order(by: "id").pluck(\.$name) == ["Bern", "Basel"])
                #expect(try LegacyTemplateCity.all.pluck(\.$country) == ["CH", "CH"])
                let zurich = LegacyTemplateCity(); zurich.name = "Zürich"; zurich.population = 421_000
                try zurich.save()
            }
            try db.close()
        }
        #expect(try fileBytes(template) == templateBytes)

        // Later launches: the user's copy is kept, with its data and its new column.
        do {
            let db = try Database(path: destination, copyingTemplateAt: template)
            let fx = SchemaFixture(database: db, trace: TraceRecorder())
            try fx.run {
                try LegacyTemplateCity.migrate()
                #expect(try LegacyTemplateCity.countAll() == 3)
                #expect(try LegacyTemplateCity.findFirst(where: ["name": "Zürich"])?.population == 421_000)
            }
            #expect(try columnNames(db, "city") == ["id", "name", "population", "country"])
            try db.close()
        }
        #expect(try fileBytes(template) == templateBytes)
        #expect(try !dir.fileNames().contains { $0.contains(".partial") })

        // An existing destination opens even when the template is gone.
        try FileManager.default.removeItem(atPath: template)
        let db = try Database(path: destination, copyingTemplateAt: template)
        #expect(try count(db, "SELECT count(*) FROM city") == 3)
    }

    @Test func aMissingTemplateIsAClearErrorAndCreatesNothing() throws {
        let dir = try TemporaryDirectory()
        let destination = dir.path("user.sqlite")
        expectActiveObjectError({ _ = try Database(path: destination, copyingTemplateAt: dir.path("missing.sqlite")) },
                                matches: \.isInvalidArgument)
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    @Test func migratorRunsOnTheCopyOfATemplate() throws {
        let dir = try TemporaryDirectory()
        let template = dir.path("bundled.sqlite")
        try Self.buildFile(template, [
            ("CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', population INTEGER NOT NULL DEFAULT 0)", []),
            ("INSERT INTO city (name) VALUES ('Bern')", []),
        ])
        var migrator = Migrator()
        migrator.register("001-country") { db in try LegacyTemplateCity.migrate(in: db) }
        migrator.register("002-index") { db in try db.execute("CREATE INDEX city_name ON city(name)") }
        for launch in 1...2 {
            let db = try Database(path: dir.path("user.sqlite"), copyingTemplateAt: template)
            try migrator.migrate(db)
            #expect(try migrator.appliedMigrations(db) == ["001-country", "002-index"], "launch \(launch)")
            #expect(try count(db, "SELECT count(*) FROM city") == 1)
            try db.close()
        }
        // The template itself was never migrated.
        let original = try Database(path: template)
        #expect(try columnNames(original, "city") == ["id", "name", "population"])
        #expect(try !tableExists(original, "schema_migrations"))
    }
}
