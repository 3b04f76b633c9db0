import ActiveObjects
import Foundation
import Testing
@testable import ActiveObjectsGenerator

/// API.md §12 in the generator: a model for every table whatever its key, relations over keys
/// of any type, and many-to-many relations through pure join tables.
@Suite("Generator: keys, relations, many-to-many")
struct GeneratorKeyTests {
    /// The models for a schema given as SQL, generated as-is.
    private func models(_ sql: String, tables: [String] = []) throws -> Generator.Output {
        let db = try Database.inMemory()
        defer { try? db.close() }
        for statement in SchemaSource.statements(in: sql) { try db.execute(statement.sql) }
        var options = Generator.Options()
        options.tables = tables
        return try Generator.generate(database: db, sourceName: "schema.sql", options: options)
    }

    /// The generated class named `name`, from its doc comment to its closing brace.
    private func classText(_ name: String, in source: String) -> String? {
        let blocks = source.components(separatedBy: "\n\n/// ")
        return blocks.first(where: { $0.contains("final class \(name): ActiveObject {") })
            .map { "/// " + $0.trimmingCharacters(in: .newlines) }
    }

    @Test("the sample schemas generate exactly the committed models", arguments: [
        ("shop", [
            "skipping virtual table product_search: a virtual table (USING fts5): its module stores the rows (query it with `db.rows`)",
        ]),
        ("music", []),
        ("chinook", []),
        ("northwind", []),
    ])
    func goldens(fixture: String, warnings: [String]) throws {
        let output = try Generator.generate(schemaAt: Fixture.path("\(fixture).sql"))
        #expect(output.source == (try Fixture.text("\(fixture).swift.expected")))
        #expect(output.warnings == warnings)
    }

    @Test("every fixture's output is byte-identical from run to run",
          arguments: ["shop", "music", "northwind", "chinook", "mappings", "ormapper"])
    func deterministic(fixture: String) throws {
        let first = try Generator.generate(schemaAt: Fixture.path("\(fixture).sql")).source
        for _ in 0..<2 { #expect(try Generator.generate(schemaAt: Fixture.path("\(fixture).sql")).source == first) }
    }

    @Test("Northwind: all 13 tables and 4 views get a model, TEXT keys, the composite key of \"Order Details\", three join tables")
    func northwind() throws {
        let source = try Generator.generate(schemaAt: Fixture.path("northwind.sql")).source
        let classes = source.split(separator: "\n").filter { $0.hasPrefix("final class ") }
        #expect(classes.count == 17)
        let customer = try #require(classText("Customer", in: source))
        #expect(customer.contains("    override class var primaryKey: String { \"CustomerID\" }\n\n    @Column(\"CustomerID\") var customerId: String = \"\"\n"))
        #expect(customer.contains("    var orders: HasMany<Order> { hasMany(\\.$customerId) }"))
        let order = try #require(classText("Order", in: source))
        #expect(order.contains("    @Column(\"CustomerID\", references: Customer.self) var customerId: String? = nil\n"))
        #expect(order.contains("    var customer: BelongsTo<Customer> { belongsTo(\\.$customerId) }"))
        let detail = try #require(classText("OrderDetail", in: source))
        #expect(detail.contains("    override class var tableName: String { \"Order Details\" }\n"
                                + "    override class var primaryKeys: [String] { [\"OrderID\", \"ProductID\"] }\n"))
        #expect(detail.contains("    @Column(\"OrderID\", references: Order.self) var orderId: Int64 = 0\n"))
        #expect(source.contains("    var territories: HasManyThrough<Territory> { hasMany(through: \\EmployeeTerritory.$employeeId, \\EmployeeTerritory.$territoryId) }"))
        #expect(source.contains("    var employees: HasManyThrough<Employee> { hasMany(through: \\EmployeeTerritory.$territoryId, \\EmployeeTerritory.$employeeId) }"))
        // A join table keyed by TEXT on both sides.
        #expect(source.contains("    var customerDemographics: HasManyThrough<CustomerDemographic> { hasMany(through: \\CustomerCustomerDemo.$customerId, \\CustomerCustomerDemo.$customerTypeId) }"))
        #expect(source.contains("    var customers: HasManyThrough<Customer> { hasMany(through: \\CustomerCustomerDemo.$customerTypeId, \\CustomerCustomerDemo.$customerId) }"))
    }

    @Test("Chinook: PlaylistTrack gives Playlist.tracks and Track.playlists; IPK indexes repeat the keys and are not listed")
    func chinook() throws {
        let source = try Generator.generate(schemaAt: Fixture.path("chinook.sql")).source
        #expect(source.split(separator: "\n").filter { $0.hasPrefix("final class ") }.count == 11)
        #expect(source.contains("    var tracks: HasManyThrough<Track> { hasMany(through: \\PlaylistTrack.$playlistId, \\PlaylistTrack.$trackId) }"))
        #expect(source.contains("    var playlists: HasManyThrough<Playlist> { hasMany(through: \\PlaylistTrack.$trackId, \\PlaylistTrack.$playlistId) }"))
        #expect(!source.contains("IPK_"))
        #expect(!source.contains("IFK_"))
    }

    @Test("each kind of key: rowid alias, natural key of any type, composite, WITHOUT ROWID, none")
    func keyKinds() throws {
        let output = try models("""
            CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE countries (iso TEXT PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE devices (id UUID PRIMARY KEY NOT NULL, label TEXT);
            CREATE TABLE tickets (number INT PRIMARY KEY, title TEXT);
            CREATE TABLE seats (row_letter TEXT NOT NULL, seat INTEGER NOT NULL, PRIMARY KEY (row_letter, seat));
            CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
            CREATE TABLE grid (x INTEGER, y INTEGER, color TEXT, PRIMARY KEY (x, y)) WITHOUT ROWID;
            CREATE TABLE events (at DATETIME NOT NULL, what TEXT);
            """)
        let source = output.source
        #expect(output.warnings.isEmpty)
        #expect(classText("Account", in: source) == """
            /// A row of the `accounts` table.
            final class Account: ActiveObject {
                override class var tableName: String { "accounts" }

                @Column var name: String = ""
            }
            """)
        // A nullable TEXT key (SQLite allows NULL there) is non-optional: a key identifies a row.
        #expect(classText("Country", in: source) == """
            /// A row of the `countries` table.
            final class Country: ActiveObject {
                override class var tableName: String { "countries" }
                override class var primaryKey: String { "iso" }

                @Column var iso: String = ""
                @Column var name: String = ""
            }
            """)
        #expect(classText("Device", in: source) == """
            /// A row of the `devices` table.
            final class Device: ActiveObject {
                override class var tableName: String { "devices" }
                override class var primaryKey: String { "id" }

                // `id` is a member of ActiveObject
                @Column("id") var idValue: UUID = UUID()
                @Column var label: String? = nil
            }
            """)
        #expect(try #require(classText("Ticket", in: source)).contains(
            "    override class var primaryKey: String { \"number\" }\n\n    @Column var number: Int64 = 0\n"))
        #expect(try #require(classText("Seat", in: source)).contains("""
                override class var primaryKeys: [String] { ["row_letter", "seat"] }

                @Column("row_letter") var rowLetter: String = ""
                @Column var seat: Int64 = 0
            """))
        #expect(classText("Settings", in: source) == """
            /// A row of the `settings` table.
            /// A WITHOUT ROWID table: `id` is always nil; `find(key:)` finds a row.
            final class Settings: ActiveObject {
                override class var primaryKey: String { "key" }
                override class var withoutRowID: Bool { true }

                @Column var key: String = ""
                @Column var value: String? = nil
            }
            """)
        #expect(try #require(classText("Grid", in: source)).contains("""
                override class var primaryKeys: [String] { ["x", "y"] }
                override class var withoutRowID: Bool { true }

                @Column var x: Int64 = 0
                @Column var y: Int64 = 0
                @Column var color: String? = nil
            """))
        #expect(classText("Event", in: source) == """
            /// A row of the `events` table.
            /// The table has no primary key: `id` is its rowid.
            final class Event: ActiveObject {
                override class var tableName: String { "events" }
                override class var primaryKey: String { "rowid" }

                @Column var at: Date = Date()
                @Column var what: String? = nil
            }
            """)
    }

    @Test("a table without a key whose column is named rowid cannot be mapped: skipped with the reason")
    func hiddenRowid() throws {
        let output = try models("CREATE TABLE a (id INTEGER PRIMARY KEY);\nCREATE TABLE b (ROWID TEXT, v TEXT);")
        #expect(output.warnings == ["skipping table b: no primary key, and its column ROWID hides the rowid that would identify rows"])
        #expect(output.source.contains("// Skipped:\n// - b: no primary key, and its column ROWID hides the rowid that would identify rows\n"))
        #expect(!output.source.contains("class B"))
    }

    @Test("a column named rowid next to a declared key (natural, composite, a rowid alias) or in a WITHOUT ROWID table: skipped with the reason")
    func keyedRowidColumn() throws {
        let output = try models("""
            CREATE TABLE a (id INTEGER PRIMARY KEY, rowid TEXT);
            CREATE TABLE b (code TEXT PRIMARY KEY, RowID INTEGER);
            CREATE TABLE c (x INTEGER, y INTEGER, rowid TEXT, PRIMARY KEY (x, y));
            CREATE TABLE d (code TEXT PRIMARY KEY, rowid TEXT) WITHOUT ROWID;
            CREATE TABLE e (rowid TEXT PRIMARY KEY, v TEXT);
            CREATE TABLE f (id INTEGER PRIMARY KEY);
            """)
        let natural = "hides the table's rowid, which the library reads by that name (as the `id` of a natural or composite key: no row would load)"
        #expect(output.warnings == [
            "skipping table a: its column rowid hides the table's rowid, which the library reads by that name (to number the rows of `insertAll`)",
            "skipping table b: its column RowID \(natural)",
            "skipping table c: its column rowid \(natural)",
            "skipping table d: a WITHOUT ROWID table, yet `fetch(sql:)` would read its column rowid as the rowid",
            "skipping table e: its column rowid \(natural)",
        ])
        #expect(output.source.contains("// Skipped:\n// - a: its column rowid hides the table's rowid"))
        #expect(output.source.split(separator: "\n").filter { $0.hasPrefix("final class ") } == ["final class F: ActiveObject {"])
    }

    @Test("a rowid alias named rowid, and columns named _rowid_ or oid, are mapped: the library never reads those")
    func otherRowidNames() throws {
        let output = try models("""
            CREATE TABLE a (rowid INTEGER PRIMARY KEY, v TEXT);
            CREATE TABLE b (code TEXT PRIMARY KEY, _rowid_ TEXT, oid INTEGER);
            CREATE TABLE c (OID TEXT, note TEXT);
            """)
        #expect(output.warnings.isEmpty)
        #expect(try #require(classText("A", in: output.source)).contains("    override class var primaryKey: String { \"rowid\" }\n\n    @Column var v: String? = nil\n"))
        #expect(try #require(classText("B", in: output.source)).contains("""
                @Column var code: String = ""
                @Column("_rowid_") var rowid: String? = nil
                @Column var oid: Int? = nil
            """))
        #expect(try #require(classText("C", in: output.source)).contains("    override class var primaryKey: String { \"rowid\" }\n\n    @Column(\"OID\") var oid: String? = nil\n"))

        // B, as generated, round-trips: the library reads the rowid as `rowid`, not by those names.
        let db = OtherRowidNamesB.db
        try db.execute("CREATE TABLE b (code TEXT PRIMARY KEY, _rowid_ TEXT, oid INTEGER)")
        let row = OtherRowidNamesB()
        row.code = "K"
        row.rowid = "text"
        row.oid = 42
        try row.save()
        let id = try #require(row.id)
        let byKey = try #require(try OtherRowidNamesB.find(key: "K"))
        #expect(byKey.id == id && byKey.rowid == "text" && byKey.oid == 42)
        #expect(try OtherRowidNamesB.find(id: id)?.code == "K")
        #expect(try OtherRowidNamesB.fetch(sql: "SELECT rowid, * FROM b").first?.id == id)
        #expect(try OtherRowidNamesB.all.pluck(\.$oid) == [42])
    }

    @Test("foreign keys of any type become relations, typed like the key they reference")
    func relationsOverAnyKey() throws {
        let source = try models("""
            CREATE TABLE customers (code TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
            CREATE TABLE devices (uuid UUID PRIMARY KEY NOT NULL);
            CREATE TABLE orders (
                id INTEGER PRIMARY KEY,
                customer_code TEXT NOT NULL REFERENCES customers(code),
                referrer_code REFERENCES customers ON DELETE SET NULL,
                device_uuid TEXT REFERENCES devices(uuid),
                legacy_code INTEGER REFERENCES customers(code)
            );
            """).source
        let order = try #require(classText("Order", in: source))
        #expect(order.contains("    @Column(\"customer_code\", references: Customer.self) var customerCode: String = \"\"\n"))
        #expect(order.contains("    // no declared type: mapped to String\n"
                               + "    @Column(\"referrer_code\", references: Customer.self, onDelete: .setNull) var referrerCode: String? = nil\n"))
        #expect(order.contains("    // declared TEXT: typed UUID like devices(uuid), the key it references\n"
                               + "    @Column(\"device_uuid\", references: Device.self) var deviceUuid: UUID? = nil\n"))
        #expect(order.contains("    // declared INTEGER: typed String like customers(code), the key it references\n"
                               + "    @Column(\"legacy_code\", references: Customer.self) var legacyCode: String? = nil\n"))
        #expect(order.contains("    var customer: BelongsTo<Customer> { belongsTo(\\.$customerCode) }\n"))
        #expect(order.contains("    var referrer: BelongsTo<Customer> { belongsTo(\\.$referrerCode) }\n"))
        #expect(order.contains("    var legacy: BelongsTo<Customer> { belongsTo(\\.$legacyCode) }\n"))
        #expect(order.contains("    var device: BelongsTo<Device> { belongsTo(\\.$deviceUuid) }\n"))
        let customer = try #require(classText("Customer", in: source))
        #expect(customer.contains("    var ordersAsCustomer: HasMany<Order> { hasMany(\\.$customerCode) }\n"))
        #expect(customer.contains("    var ordersAsReferrer: HasMany<Order> { hasMany(\\.$referrerCode) }\n"))
        #expect(source.contains("    var orders: HasMany<Order> { hasMany(\\.$deviceUuid) }\n"))
    }

    @Test("foreign keys that cannot be relations: to a composite key, to a non-key column, to a keyless table, composite ones")
    func unmappableForeignKeys() throws {
        let source = try models("""
            CREATE TABLE lines (order_id INTEGER, product_id INTEGER, sku TEXT UNIQUE, PRIMARY KEY (order_id, product_id));
            CREATE TABLE events (what TEXT);
            CREATE TABLE notes (
                id INTEGER PRIMARY KEY,
                order_id INTEGER REFERENCES lines(order_id),
                product_id INTEGER,
                line_sku TEXT REFERENCES lines(sku),
                event_id INTEGER REFERENCES events,
                FOREIGN KEY (order_id, product_id) REFERENCES lines(order_id, product_id)
            );
            """).source
        let note = try #require(classText("Note", in: source))
        #expect(note.contains("/// - composite foreign key (order_id, product_id) references lines(order_id, product_id): "
                              + "no relation generated (a relation needs a single-column key)\n"))
        #expect(note.contains("    // references lines(order_id), part of its composite primary key (order_id, product_id): "
                              + "no relation generated (a relation needs a single-column key)\n    @Column(\"order_id\") var orderId: Int64? = nil\n"))
        #expect(note.contains("    @Column(\"product_id\") var productId: Int64? = nil\n"))
        #expect(note.contains("    // references lines(sku), which is not its primary key: no relation generated\n"
                              + "    @Column(\"line_sku\") var lineSku: String? = nil\n"))
        #expect(note.contains("    // references events, which has no primary key: no relation generated\n"
                              + "    @Column(\"event_id\") var eventId: Int64? = nil\n"))
        #expect(!note.contains("references:"))
        #expect(!source.contains("BelongsTo"))
        #expect(!source.contains("HasMany"))
    }

    @Test("a unique foreign key, or one that is the whole key, gives HasOne")
    func hasOne() throws {
        let source = try models("""
            CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE profiles (user_id INTEGER NOT NULL UNIQUE REFERENCES users(id), bio TEXT);
            CREATE TABLE customers (code TEXT PRIMARY KEY NOT NULL);
            CREATE TABLE customer_settings (customer_code TEXT PRIMARY KEY NOT NULL REFERENCES customers, theme TEXT);
            CREATE TABLE nodes (id INTEGER PRIMARY KEY, next_id INTEGER UNIQUE REFERENCES nodes(id));
            """).source
        #expect(source.contains("    var profile: HasOne<Profile> { hasOne(\\.$userId) }\n"))
        #expect(source.contains("    @Column(\"user_id\", unique: true, references: User.self) var userId: Int64 = 0\n"))
        #expect(source.contains("    var customerSettings: HasOne<CustomerSettings> { hasOne(\\.$customerCode) }\n"))
        #expect(source.contains("    var next: BelongsTo<Node> { belongsTo(\\.$nextId) }\n    var child: HasOne<Node> { hasOne(\\.$nextId) }\n"))
    }

    @Test("a one-to-one table keyed by its foreign key: the key is a @Column, with belongsTo and the parent's hasOne")
    func keyIsForeignKey() throws {
        let source = try models("""
            CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE profiles (user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, bio TEXT);
            CREATE TABLE avatars (user_id INTEGER NOT NULL, url TEXT, PRIMARY KEY (user_id), FOREIGN KEY (user_id) REFERENCES users);
            CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
            """).source
        #expect(classText("Profile", in: source) == """
            /// A row of the `profiles` table.
            final class Profile: ActiveObject {
                override class var tableName: String { "profiles" }
                override class var primaryKey: String { "user_id" }

                @Column("user_id", references: User.self, onDelete: .cascade) var userId: Int64 = 0
                @Column var bio: String? = nil

                var user: BelongsTo<User> { belongsTo(\\.$userId) }
            }
            """)
        #expect(try #require(classText("Avatar", in: source)).contains(
            "    override class var primaryKey: String { \"user_id\" }\n\n    @Column(\"user_id\", references: User.self) var userId: Int64 = 0\n"))
        let user = try #require(classText("User", in: source))
        #expect(user.contains("    var avatar: HasOne<Avatar> { hasOne(\\.$userId) }\n    var profile: HasOne<Profile> { hasOne(\\.$userId) }\n"))
        #expect(!source.contains("no relation generated"))
        // An INTEGER PRIMARY KEY that is no foreign key stays `id`.
        #expect(try #require(classText("Note", in: source)).contains("    override class var tableName: String { \"notes\" }\n\n    @Column var body: String? = nil\n"))
    }

    @Test("the generated one-to-one models work: the key is the rowid, relations both ways, eager loading, cascade")
    func keyIsForeignKeyRoundTrip() throws {
        let db = OneToOneUser.db
        try db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        try db.execute("CREATE TABLE profiles (user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, bio TEXT)")
        let user = OneToOneUser()
        user.name = "Ann"
        try user.save()
        let userID = try #require(user.id)
        let profile = OneToOneProfile()
        try profile.user.set(user)
        profile.bio = "hi"
        try profile.save()
        #expect(profile.userId == userID && profile.id == userID)
        #expect(try OneToOneProfile.find(key: userID)?.bio == "hi")
        #expect(try OneToOneProfile.find(id: userID)?.bio == "hi")
        #expect(try profile.user.get()?.name == "Ann")
        #expect(try user.profile.get()?.bio == "hi")
        #expect(try OneToOneUser.all.including(\.profile).all().first?.profile.get()?.userId == userID)
        #expect(try OneToOneProfile.all.including(\.user).all().first?.user.get()?.name == "Ann")
        #expect(try OneToOneUser.all.joining(\.profile).count() == 1)
        try user.delete()
        #expect(try OneToOneProfile.all.count() == 0)
    }

    @Test("pure join tables: composite key, own id, or no key; both sides get HasManyThrough")
    func pureJoins() throws {
        let source = try models("""
            CREATE TABLE playlists (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE tracks (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            CREATE TABLE tags (name TEXT PRIMARY KEY NOT NULL);
            CREATE TABLE genres (id INTEGER PRIMARY KEY);
            CREATE TABLE playlist_track (
                playlist_id INTEGER NOT NULL REFERENCES playlists(id),
                track_id INTEGER NOT NULL REFERENCES tracks(id),
                PRIMARY KEY (playlist_id, track_id)
            );
            CREATE TABLE track_tags (id INTEGER PRIMARY KEY, track_id INTEGER REFERENCES tracks, tag TEXT REFERENCES tags);
            CREATE TABLE track_genres (track_id INTEGER REFERENCES tracks, genre_id INTEGER REFERENCES genres);
            """).source
        #expect(source.contains("    var tracks: HasManyThrough<Track> { hasMany(through: \\PlaylistTrack.$playlistId, \\PlaylistTrack.$trackId) }\n"))
        #expect(source.contains("    var playlists: HasManyThrough<Playlist> { hasMany(through: \\PlaylistTrack.$trackId, \\PlaylistTrack.$playlistId) }\n"))
        #expect(source.contains("    var tags: HasManyThrough<Tag> { hasMany(through: \\TrackTag.$trackId, \\TrackTag.$tag) }\n"))
        #expect(source.contains("    var tracks: HasManyThrough<Track> { hasMany(through: \\TrackTag.$tag, \\TrackTag.$trackId) }\n"))
        #expect(source.contains("    var genres: HasManyThrough<Genre> { hasMany(through: \\TrackGenre.$trackId, \\TrackGenre.$genreId) }\n"))
        #expect(source.contains("    var tracks: HasManyThrough<Track> { hasMany(through: \\TrackGenre.$genreId, \\TrackGenre.$trackId) }\n"))
        #expect(source.contains("/// A join table (many-to-many): see `Playlist.tracks` and `Track.playlists`.\n"))
        // The join model keeps its own relations too.
        #expect(source.contains("    var playlistTracks: HasMany<PlaylistTrack> { hasMany(\\.$playlistId) }\n"))
        #expect(source.contains("    var playlist: BelongsTo<Playlist> { belongsTo(\\.$playlistId) }\n"))
    }

    @Test("not pure: a payload column, a natural key on one side, a side without a relation")
    func impureJoins() throws {
        let schema = """
            CREATE TABLE users (id INTEGER PRIMARY KEY);
            CREATE TABLE tracks (id INTEGER PRIMARY KEY);
            CREATE TABLE favorites (user_id INTEGER REFERENCES users, track_id INTEGER REFERENCES tracks, added_at DATETIME);
            CREATE TABLE first_plays (user_id INTEGER PRIMARY KEY NOT NULL REFERENCES users, track_id INTEGER NOT NULL REFERENCES tracks) WITHOUT ROWID;
            CREATE TABLE loose (user_id INTEGER REFERENCES users, track_label TEXT);
            """
        #expect(!(try models(schema).source.contains("HasManyThrough")))
        // With one side left out, the other foreign key is no relation: not a join either.
        let partial = try models(schema + "\nCREATE TABLE plays (user_id INTEGER REFERENCES users, track_id INTEGER REFERENCES tracks);",
                                 tables: ["users", "plays"]).source
        #expect(!partial.contains("HasManyThrough"))
        #expect(partial.contains("    // references tracks, which has no generated model: no relation generated\n"))
    }

    @Test("a self-join and a second path to the same target are told apart")
    func manyToManyNames() throws {
        let source = try models("""
            CREATE TABLE people (id INTEGER PRIMARY KEY);
            CREATE TABLE friendships (person_id INTEGER NOT NULL REFERENCES people, friend_id INTEGER NOT NULL REFERENCES people,
                                      PRIMARY KEY (person_id, friend_id)) WITHOUT ROWID;
            CREATE TABLE albums (id INTEGER PRIMARY KEY);
            CREATE TABLE tracks (id INTEGER PRIMARY KEY, album_id INTEGER REFERENCES albums);
            CREATE TABLE bonus_tracks (album_id INTEGER REFERENCES albums, track_id INTEGER REFERENCES tracks);
            """).source
        #expect(source.contains("    var peopleAsPerson: HasManyThrough<Person> { hasMany(through: \\Friendship.$personId, \\Friendship.$friendId) }\n"))
        #expect(source.contains("    var peopleAsFriend: HasManyThrough<Person> { hasMany(through: \\Friendship.$friendId, \\Friendship.$personId) }\n"))
        #expect(source.contains("/// A join table (many-to-many): see `Person.peopleAsPerson` and `Person.peopleAsFriend`.\n"))
        // `tracks` is the album's has-many already.
        #expect(source.contains("    var tracks: HasMany<Track> { hasMany(\\.$albumId) }\n"))
        #expect(source.contains("    var tracksViaBonusTrack: HasManyThrough<Track> { hasMany(through: \\BonusTrack.$albumId, \\BonusTrack.$trackId) }\n"))
    }

    @Test("a table and columns named with spaces map to Swift names with explicit SQL names")
    func namesWithSpaces() throws {
        let source = try models("""
            CREATE TABLE "Order Details" ("Order ID" INTEGER NOT NULL, "Unit Price" REAL NOT NULL, PRIMARY KEY ("Order ID", "Unit Price"));
            """).source
        #expect(source.contains("""
            final class OrderDetail: ActiveObject {
                override class var tableName: String { "Order Details" }
                override class var primaryKeys: [String] { ["Order ID", "Unit Price"] }

                // column "Order ID" has no exact Swift spelling
                @Column("Order ID") var orderId: Int64 = 0
                // column "Unit Price" has no exact Swift spelling
                @Column("Unit Price") var unitPrice: Double = 0
            }
            """))
    }

    @Test("a script's virtual tables are listed, not run: an unknown module is no error")
    func scriptVirtualTables() throws {
        let scratch = try ScratchDirectory()
        let path = try scratch.write("""
            CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
            CREATE VIRTUAL TABLE IF NOT EXISTS main."note search" USING no_such_module(body);
            CREATE VIRTUAL TABLE notes_fts USING fts5(body, content = 'notes', content_rowid = 'id');
            """, to: "notes.sql")
        let output = try Generator.generate(schemaAt: path)
        #expect(output.warnings == [
            "skipping virtual table note search: a virtual table (USING no_such_module): its module stores the rows (query it with `db.rows`)",
            "skipping virtual table notes_fts: a virtual table (USING fts5): its module stores the rows (query it with `db.rows`)",
        ])
        #expect(output.source.contains("final class Note: ActiveObject {"))
    }

    /// An FTS5 database file as another tool writes it (the `sqlite3` shell), when there is one.
    private static let sqliteShell = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/opt/homebrew/bin/sqlite3"]
        .first(where: { FileManager.default.isExecutableFile(atPath: $0) })

    @Test("a database file with an FTS5 table: the virtual table and its shadow tables are skipped, none is opened",
          .enabled(if: sqliteShell != nil, "needs the sqlite3 shell to write the file"))
    func fileWithVirtualTables() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("search.sqlite")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: try #require(Self.sqliteShell))
        shell.arguments = [path, "CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT); "
                           + "CREATE VIRTUAL TABLE docs_fts USING fts5(body); INSERT INTO docs_fts VALUES ('hello');"]
        try shell.run()
        shell.waitUntilExit()
        try #require(shell.terminationStatus == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let output = try Generator.generate(schemaAt: path)
        #expect(output.warnings.first == "skipping virtual table docs_fts: a virtual table (USING fts5): its module stores the rows (query it with `db.rows`)")
        #expect(output.warnings.dropFirst().allSatisfy { $0.hasSuffix(": an internal table of the virtual table docs_fts") })
        #expect(output.warnings.count > 2)
        #expect(output.source.contains("final class Doc: ActiveObject {"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("a database Litestream replicates: its _litestream_seq and _litestream_lock tables get no model")
    func litestreamTablesSkipped() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("replicated.sqlite")
        let db = try Database(path: path)
        // The tables as Litestream creates them in the database it replicates.
        try db.execute("CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER)")
        try db.execute("CREATE TABLE _litestream_lock (id INTEGER)")
        try db.execute("CREATE TABLE todo (id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
        try db.close()

        let output = try Generator.generate(schemaAt: path)
        #expect(output.source.contains("final class Todo: ActiveObject {"))
        #expect(!output.source.lowercased().contains("litestream"))
        #expect(output.warnings.isEmpty)
    }
}

/// The model generated for `b (code TEXT PRIMARY KEY, _rowid_ TEXT, oid INTEGER)`, in a database of its own.
final class OtherRowidNamesB: ActiveObject {
    static let db: Database = try! Database.inMemory()
    override class var database: Database? { db }
    override class var tableName: String { "b" }
    override class var primaryKey: String { "code" }

    @Column var code: String = ""
    @Column("_rowid_") var rowid: String? = nil
    @Column var oid: Int? = nil
}

/// The models generated for `users` and `profiles (user_id INTEGER PRIMARY KEY REFERENCES users(id)
/// ON DELETE CASCADE, bio TEXT)`, in a database of their own.
final class OneToOneUser: ActiveObject {
    static let db: Database = try! Database.inMemory()
    override class var database: Database? { db }
    override class var tableName: String { "users" }

    @Column var name: String = ""

    var profile: HasOne<OneToOneProfile> { hasOne(\.$userId) }
}

final class OneToOneProfile: ActiveObject {
    override class var database: Database? { OneToOneUser.db }
    override class var tableName: String { "profiles" }
    override class var primaryKey: String { "user_id" }

    @Column("user_id", references: OneToOneUser.self, onDelete: .cascade) var userId: Int64 = 0
    @Column var bio: String? = nil

    var user: BelongsTo<OneToOneUser> { belongsTo(\.$userId) }
}
