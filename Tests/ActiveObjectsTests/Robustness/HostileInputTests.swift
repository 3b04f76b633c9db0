import Foundation
import Testing
@testable import ActiveObjects

/// The database the models of this file use; each test sets its own.
private let hostileDatabase = Locked<Database?>(nil)

final class RelHostileItem: ActiveObject {
    override class var database: Database? { hostileDatabase.withLock { $0 } }
    @Column var name: String = ""
    @Column var note: String? = nil
    @Column var amount: Double = 0
    @Column var ratio: Double? = nil
    @Column var payload: Data = Data()
}

final class RelDatedItem: ActiveObject {
    override class var database: Database? { hostileDatabase.withLock { $0 } }
    @Column var label: String = ""
    @Column var at: Date = Date(timeIntervalSince1970: 0)
    @Column var maybe: Date? = nil
}

/// Models named after SQL keywords, with keyword property names.
enum RelSQLKeywords {
    final class Group: ActiveObject {
        override class var database: Database? { hostileDatabase.withLock { $0 } }
        @Column var select: String = ""
        @Column var `default`: Int = 0
        var orders: HasMany<Order> { hasMany(\.$group) }
    }

    final class Order: ActiveObject {
        override class var database: Database? { hostileDatabase.withLock { $0 } }
        @Column var order: Int = 0
        @Column(references: Group.self, onDelete: .cascade) var group: Int64? = nil
        @Column var when: Date? = nil
        @Column(indexed: true) var select: String = ""
        @Column var `default`: Bool = false
        var owner: BelongsTo<Group> { belongsTo(\.$group) }
    }

    final class Index: ActiveObject {
        override class var database: Database? { hostileDatabase.withLock { $0 } }
        @Column(unique: true) var order: String = ""
        @Column var group: Double? = nil
    }

    final class Transaction: ActiveObject {
        override class var database: Database? { hostileDatabase.withLock { $0 } }
        @Column var when: Date = Date(timeIntervalSince1970: 0)
        @Column var select: Data? = nil
        @Column var `default`: String? = nil
    }
}

/// Hostile input through the public API: injection strings as column names, awkward values,
/// invalid UTF-8, huge values, non-finite numbers, extreme dates, keyword names.
@Suite("Hostile input", .serialized)
struct HostileInputTests {
    static func open(_ options: Database.Options = Database.Options()) throws -> Database {
        let db = try Database.inMemory(options: options)
        hostileDatabase.withLock { $0 = db }
        try RelHostileItem.createTable()
        return db
    }

    static func close() { hostileDatabase.withLock { $0 = nil } }

    /// Row count, schema and content: what must not change.
    static func fingerprint(_ db: Database) throws -> String {
        let schema = try db.rows("SELECT type, name, sql FROM sqlite_schema ORDER BY name").map { row in
            "\(try row["type"] as String)|\(try row["name"] as String)|\((try row["sql"] as String?) ?? "")"
        }
        let rows = try db.rows("SELECT id, name, note, amount, ratio, hex(payload) AS p FROM rel_hostile_item ORDER BY id").map { row in
            "\(try row["id"] as Int64)|\(try row["name"] as String)|\((try row["note"] as String?) ?? "∅")|\(try row["amount"] as Double)|\((try row["ratio"] as Double?).map { "\($0)" } ?? "∅")|\(try row["p"] as String)"
        }
        return (schema + ["count \(rows.count)"] + rows).joined(separator: "\n")
    }

    static let injectionKeys = [
        "a = 1 OR 1=1", "x\"; DROP TABLE rel_hostile_item; --", "x\"; DROP TABLE t; --",
        "select", "order", "group", "", "na\0me", "name\0", "name\" --", "name --", "\"name\"",
        "name = name", "1", "*", "rowid", "name; DELETE FROM rel_hostile_item",
    ]

    @Test func injectionStringsAsColumnNamesAreUnknownColumnsAndChangeNothing() throws {
        let db = try Self.open()
        defer { Self.close() }
        for index in 0..<5 {
            let item = RelHostileItem()
            item.name = "item \(index)"
            item.amount = Double(index)
            try item.save()
        }
        let before = try Self.fingerprint(db)
        var refused = 0

        func expectUnknown(_ key: String, _ what: String, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("\(what) with key \(String(reflecting: key)) did not throw")
            } catch let error as ActiveObjectError {
                if case .unknownColumn(_, let column) = error {
                    #expect(column == key, "\(what): names \(String(reflecting: column))")
                    refused += 1
                } else {
                    Issue.record("\(what) with key \(String(reflecting: key)): \(error)")
                }
            } catch {
                Issue.record("\(what) with key \(String(reflecting: key)): \(type(of: error)) \(error)")
            }
        }

        for key in Self.injectionKeys {
            let criteria: [String: Any?] = [key: 1]
            let mixed: [String: Any?] = ["name": "item 1", key: "x"]
            expectUnknown(key, "find(where:)") { _ = try RelHostileItem.find(where: criteria) }
            expectUnknown(key, "find(where:) with a valid key too") { _ = try RelHostileItem.find(where: mixed) }
            expectUnknown(key, "findFirst(where:)") { _ = try RelHostileItem.findFirst(where: criteria) }
            expectUnknown(key, "count(where:)") { _ = try RelHostileItem.count(where: criteria) }
            expectUnknown(key, "delete(where:)") { _ = try RelHostileItem.delete(where: criteria) }
            expectUnknown(key, "delete(where:) IN list") { _ = try RelHostileItem.delete(where: [key: [1, 2]]) }
            expectUnknown(key, "delete(where:) IS NULL") { _ = try RelHostileItem.delete(where: [key: nil]) }
            let query = RelHostileItem.where(criteria)
            expectUnknown(key, "where.all") { _ = try query.all() }
            expectUnknown(key, "where.first") { _ = try query.first() }
            expectUnknown(key, "where.count") { _ = try query.count() }
            expectUnknown(key, "where.exists") { _ = try query.exists() }
            expectUnknown(key, "where.delete") { _ = try query.delete() }
            expectUnknown(key, "where.pluck") { _ = try query.pluck(\.$name) }
            expectUnknown(key, "where.each") { try query.each { _ in } }
            expectUnknown(key, "where.cursor") { _ = try query.cursor() }
            expectUnknown(key, "where.page") { _ = try query.page(1, size: 2) }
            let ordered = RelHostileItem.order(by: key)
            expectUnknown(key, "order(by:).all") { _ = try ordered.all() }
            expectUnknown(key, "order(by:).delete") { _ = try ordered.limit(1).delete() }
            expectUnknown(key, "order(by:) descending") { _ = try RelHostileItem.all.order(by: key, .descending).first() }
            #expect(try Self.fingerprint(db) == before, "key \(String(reflecting: key)) changed the database")
        }
        #expect(try Self.fingerprint(db) == before)
        #expect(try RelHostileItem.countAll() == 5)
        print("RELIABILITY hostile keys: \(Self.injectionKeys.count) injection keys × 19 entry points, \(refused) refused with unknownColumn, database unchanged")
    }

    static let awkwardStrings = [
        "it's", "\"quoted\"", "''", "a -- b", "--", "/* c */", "/*", "*/", "a\0b", "a", "\0", "\0\0",
        "😀", "👨‍👩‍👧‍👦 family", "e\u{301}", "é", "'; DROP TABLE rel_hostile_item; --", "%", "_", "\\", "",
        "line\nbreak", "tab\there", "\u{FEFF}bom", "\u{202E}rtl", "x\"; DROP TABLE t; --",
    ]

    @Test func awkwardValuesRoundTripExactlyAndMatchOnlyThemselves() throws {
        let db = try Self.open()
        defer { Self.close() }
        // Keyed by position, not by String: Swift's == finds "e\u{301}" and "é" equal, SQLite does not.
        var ids: [Int64] = []
        for value in Self.awkwardStrings {
            let item = RelHostileItem()
            item.name = value
            item.note = value
            item.payload = Data(value.utf8) + Data([0, 0xFF, 0])
            try item.save()
            ids.append(try #require(item.id))
        }
        for (index, value) in Self.awkwardStrings.enumerated() {
            let shown = String(reflecting: value) + " " + value.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ",")
            let stored = try #require(try RelHostileItem.find(id: ids[index]))
            #expect(stored.name.utf8.elementsEqual(value.utf8), "\(shown) read back as \(String(reflecting: stored.name))")
            #expect(stored.note.map { $0.utf8.elementsEqual(value.utf8) } == true, "\(shown): note differs")
            #expect(stored.payload == Data(value.utf8) + Data([0, 0xFF, 0]))
            // Equality in SQL is byte-wise: "é" precomposed and decomposed are different rows.
            let matches = try RelHostileItem.find(where: ["name": value])
            #expect(matches.map(\.id) == [ids[index]], "\(shown) matched \(matches.map(\.name))")
            #expect(try RelHostileItem.where(\.$note == value).count() == 1, "\(shown)")
            #expect(try RelHostileItem.where("name = ?", value).pluck(\.$name).map { Array($0.utf8) } == [Array(value.utf8)])
            #expect(try RelHostileItem.count(where: ["note": [value, "no such value"]]) == 1, "\(shown)")
        }
        let all = try RelHostileItem.findAll()
        #expect(all.count == Self.awkwardStrings.count)
        #expect(try db.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'rel_hostile_item'") == 1)
        print("RELIABILITY hostile values: \(Self.awkwardStrings.count) awkward strings (quotes, --, /*, NUL, emoji) round-trip byte-exact and match only themselves")
    }

    @Test func invalidUTF8FromTheDatabaseIsRepairedWithReplacementCharacters() throws {
        let db = try Self.open()
        defer { Self.close() }
        try db.execute("INSERT INTO rel_hostile_item(name, note) VALUES (CAST(X'66FF6F' AS TEXT), CAST(X'C3' AS TEXT))")
        try db.execute("INSERT INTO rel_hostile_item(name) VALUES (CAST(X'E282AC00E2' AS TEXT))")
        let items = try RelHostileItem.findAll()
        #expect(items.map(\.name) == ["f\u{FFFD}o", "€\0\u{FFFD}"])
        #expect(items.first?.note == "\u{FFFD}")
        #expect(try RelHostileItem.fetch(sql: "SELECT * FROM rel_hostile_item ORDER BY id").map(\.name) == ["f\u{FFFD}o", "€\0\u{FFFD}"])
        #expect(try RelHostileItem.all.order(by: \.$name).pluck(\.$name).count == 2)
        // The repaired text is not a change: saving writes nothing, the bytes stay as they were.
        let first = try #require(items.first)
        #expect(!first.hasChanges)
        try first.save()
        #expect(try db.scalar("SELECT hex(name) FROM rel_hostile_item WHERE id = ?", [first.id!]) == "66FF6F")
        // Writing it back explicitly stores valid UTF-8.
        first.name = first.name + "!"
        try first.save()
        #expect(try db.scalar("SELECT hex(name) FROM rel_hostile_item WHERE id = ?", [first.id!]) == "66EFBFBD6F21")
    }

    @Test func fiveMegabyteValuesRoundTrip() throws {
        let db = try Self.open()
        defer { Self.close() }
        var generator = SeededGenerator(seed: 5_000_000)
        let size = 5 * 1024 * 1024
        var bytes = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 8) {
            withUnsafeBytes(of: generator.next()) { word in
                for offset in 0..<Swift.min(8, size - index) { bytes[index + offset] = word[offset] }
            }
        }
        let blob = Data(bytes)
        let text = String(repeating: "ünïcödé ", count: size / 16)
        let item = RelHostileItem()
        item.payload = blob
        item.note = text
        try item.save()
        let stored = try #require(try RelHostileItem.find(id: item.id!))
        #expect(stored.payload == blob)
        #expect(stored.note == text)
        stored.payload = blob + Data([1, 2, 3])
        try stored.save()
        #expect(try RelHostileItem.find(id: item.id!)?.payload.count == size + 3)
        #expect(try db.scalar("SELECT length(payload) FROM rel_hostile_item") == size + 3)
        print("RELIABILITY hostile large: 5 MB Data and \(text.utf8.count / 1024 / 1024) MB text round-trip")
    }

    @Test func aValueOverTheLengthLimitIsTooBigAndTheObjectKeepsItsState() throws {
        let db = try Self.open()
        defer { Self.close() }
        db.writer.lock.withLock { _ = db.writer.setLimit(0 /* SQLITE_LIMIT_LENGTH */, 1_000_000) }
        let before = try Self.fingerprint(db)

        let blob = RelHostileItem()
        blob.payload = Data(repeating: 7, count: 1_000_001)
        let error = expectDatabaseError(.tooBig) { try blob.save() }
        #expect(error?.sql?.contains("INSERT") == true)
        #expect(blob.id == nil && blob.payload.count == 1_000_001)

        let text = RelHostileItem()
        text.name = String(repeating: "n", count: 1_500_000)
        expectDatabaseError(.tooBig) { try text.save() }
        #expect(text.id == nil)
        #expect(try Self.fingerprint(db) == before)

        // An update over the limit keeps the change pending; a smaller value then saves.
        let small = RelHostileItem()
        small.name = "small"
        try small.save()
        small.note = String(repeating: "x", count: 2_000_000)
        expectDatabaseError(.tooBig) { try small.save() }
        #expect(small.changedColumns == ["note"])
        #expect(try RelHostileItem.find(id: small.id!)?.note == nil)
        // Inside a transaction: the whole transaction is refused and rolled back.
        expectDatabaseError(.tooBig) {
            try db.transaction {
                let ok = RelHostileItem()
                ok.name = "in transaction"
                try ok.save()
                try blob.save()
            }
        }
        #expect(try RelHostileItem.count(where: ["name": "in transaction"]) == 0)
        // The limit bounds whole rows too: leave room for the other columns.
        small.note = String(repeating: "x", count: 900_000)
        try small.save()
        blob.payload = Data(repeating: 7, count: 900_000)
        try blob.save()
        #expect(try RelHostileItem.find(id: blob.id!)?.payload.count == 900_000)
    }

    @Test func nanIsRefusedNamingTheColumnAndInfinitiesAndNegativeZeroRoundTrip() throws {
        let db = try Self.open()
        defer { Self.close() }
        func expectNaN(_ column: String, _ body: () throws -> Void) {
            expectActiveObjectError(body) { error in
                if case .invalidValue(let table, let named, _) = error { return table == "rel_hostile_item" && named == column }
                return false
            }
        }
        let plain = RelHostileItem()
        plain.amount = .nan
        expectNaN("amount") { try plain.save() }
        #expect(plain.id == nil)
        let optional = RelHostileItem()
        optional.ratio = .nan
        expectNaN("ratio") { try optional.save() }
        let signalling = RelHostileItem()
        signalling.ratio = .signalingNaN
        expectNaN("ratio") { try signalling.save() }
        expectNaN("ratio") { try signalling.upsert() }
        #expect(try RelHostileItem.countAll() == 0)

        let item = RelHostileItem()
        item.amount = .infinity
        item.ratio = -.infinity
        try item.save()
        var stored = try #require(try RelHostileItem.find(id: item.id!))
        #expect(stored.amount == .infinity && stored.ratio == -.infinity)
        #expect(try RelHostileItem.count(where: ["amount": Double.infinity]) == 1)
        #expect(try RelHostileItem.where(\.$ratio < -Double.greatestFiniteMagnitude).count() == 1)

        // An update to NaN is refused and leaves the row as it was.
        stored.amount = .nan
        expectNaN("amount") { try stored.save() }
        #expect(try RelHostileItem.find(id: item.id!)?.amount == .infinity)

        stored.amount = -0.0
        stored.ratio = -0.0
        try stored.save()
        stored = try #require(try RelHostileItem.find(id: item.id!))
        #expect(stored.amount == 0 && stored.ratio == 0)
        // SQLite stores -0.0 in a REAL column as +0.0 (documented in SQLITE-NOTES).
        #expect(stored.amount.sign == .plus && stored.ratio?.sign == .plus)
        #expect(!stored.hasChanges)
        // NaN inside a transaction: nothing of the transaction is written.
        expectNaN("amount") {
            try db.transaction {
                let ok = RelHostileItem()
                try ok.save()
                let bad = RelHostileItem()
                bad.amount = .nan
                try bad.save()
            }
        }
        #expect(try RelHostileItem.countAll() == 1)
    }

    // MARK: Dates

    struct DateCase: CustomTestStringConvertible {
        let name: String
        let seconds: Double   // since 1970
        var testDescription: String { name }
    }

    static let dateCases = [
        DateCase(name: "moon landing 1969", seconds: -14_182_939.877),
        DateCase(name: "just before the epoch", seconds: -0.000_4),
        DateCase(name: "1900 sub-ms", seconds: -2_208_988_800 + 0.123_456_7),
        DateCase(name: "year 1", seconds: -62_135_596_800),
        DateCase(name: "year 1 sub-ms", seconds: -62_135_596_800 + 0.987_654),
        DateCase(name: "year 9999 end", seconds: 253_402_300_799.998),
        DateCase(name: "year 9999 start", seconds: 253_370_764_800),
        DateCase(name: "2023 sub-µs", seconds: 1_700_000_000.123_456_789),
        DateCase(name: "2023 .9996", seconds: 1_700_000_000.999_6),
        DateCase(name: "epoch", seconds: 0),
    ]

    @Test(arguments: [DateStrategy.iso8601Text, .unixSeconds, .unixMilliseconds, .compactText])
    func extremeDatesAndSubMillisecondFractionsKeepTheDocumentedPrecision(strategy: DateStrategy) throws {
        var options = Database.Options()
        options.dateStrategy = strategy
        let db = try Database.inMemory(options: options)
        hostileDatabase.withLock { $0 = db }
        defer { Self.close() }
        try RelDatedItem.createTable()

        /// What the strategy documents it keeps.
        func expected(_ seconds: Double) -> Double {
            let millis = (seconds * 1000).rounded()
            switch strategy {
            case .iso8601Text, .unixMilliseconds: return millis / 1000           // ms, rounded
            case .compactText: return (millis / 1000).rounded(.down)              // whole seconds
            case .unixSeconds: return seconds                                      // ~µs (a Double)
            }
        }
        var worst = 0.0
        for item in Self.dateCases {
            let original = Date(timeIntervalSince1970: item.seconds)
            let object = RelDatedItem()
            object.label = item.name
            object.at = original
            object.maybe = original
            try object.save()
            let stored = try #require(try RelDatedItem.find(id: object.id!))
            let read = stored.at.timeIntervalSince1970
            let want = expected(original.timeIntervalSince1970)
            // Date keeps seconds since 2001 in a Double: allow a few ulps of the magnitude.
            let tolerance = Swift.max(strategy == .unixSeconds ? 1e-6 : 1e-7, original.timeIntervalSince1970.magnitude.ulp * 4)
            let error = abs(read - want)
            worst = Swift.max(worst, abs(read - original.timeIntervalSince1970))
            #expect(error <= tolerance, "\(strategy) \(item.name): wrote \(item.seconds), read \(read), expected \(want)")
            #expect(stored.maybe == stored.at)
            // The stored value is what the strategy writes, so a reload is not a change.
            #expect(!stored.hasChanges, "\(strategy) \(item.name)")
            #expect(try RelDatedItem.count(where: ["at": stored.at]) >= 1, "\(strategy) \(item.name): not found by its own value")
        }
        // Chronological order survives for every strategy (text forms sort as dates).
        let ordered = try RelDatedItem.order(by: \.$at).order(by: \.$label).all().map { $0.at.timeIntervalSince1970 }
        #expect(ordered == ordered.sorted())
        // Before 1970: 1969, 1900, year 1 (twice); -0.4 ms only where sub-ms precision is kept.
        let beforeEpoch = try RelDatedItem.where(\.$at < Date(timeIntervalSince1970: 0)).count()
        #expect(beforeEpoch == 4 + (strategy == .unixSeconds ? 1 : 0), "\(strategy)")
        print("RELIABILITY hostile dates \(strategy): \(Self.dateCases.count) dates from year 1 to 9999, worst error \(worst) s")
    }

    // MARK: Keyword names

    @Test func modelsNamedAfterSQLKeywordsWithKeywordColumnsWork() throws {
        let db = try Database.inMemory()
        hostileDatabase.withLock { $0 = db }
        defer { Self.close() }
        typealias K = RelSQLKeywords
        #expect(K.Order.tableName == "order" && K.Group.tableName == "group")
        #expect(K.Index.tableName == "index" && K.Transaction.tableName == "transaction")
        try K.Group.createTable()
        try K.Order.createTable()
        try K.Index.createTable()
        try K.Transaction.createTable()
        try K.Order.migrate()   // a second run adds nothing

        let group = K.Group()
        group.select = "from"
        group.default = 7
        try group.save()
        var orders: [K.Order] = []
        for n in 0..<5 {
            let order = K.Order()
            order.order = 5 - n
            order.group = group.id
            order.when = Date(timeIntervalSince1970: Double(n) * 3600)
            order.select = n.isMultiple(of: 2) ? "where" : "having"
            order.default = n == 3
            try order.save()
            orders.append(order)
        }
        #expect(try K.Order.countAll() == 5)
        #expect(try K.Order.find(where: ["order": 3, "select": "where"]).map(\.order) == [3])
        #expect(try K.Order.count(where: ["default": true]) == 1)
        #expect(try K.Order.where(\.$order > 2).order(by: \.$order).all().map(\.order) == [3, 4, 5])
        #expect(try K.Order.order(by: "order").all().map(\.order) == [1, 2, 3, 4, 5])
        #expect(try K.Order.order(by: "when", .descending).first()?.order == 1)
        #expect(try K.Order.where(\.$select == "having").pluck(\.$order).sorted() == [2, 4])
        #expect(try K.Order.where(["group": group.id]).count() == 5)
        #expect(try group.orders.count() == 5)
        #expect(try orders[0].owner.get()?.select == "from")
        #expect(try K.Order.all.including(\.owner).all().count == 5)
        let found = try #require(try K.Order.find(id: orders[1].id!))
        #expect(found.order == 4 && found.select == "having" && found.when == Date(timeIntervalSince1970: 3600))
        found.default = true
        try found.save()
        try found.reload()
        #expect(found.default)
        #expect(try K.Order.delete(where: ["select": "having"]) == 2)

        let index = K.Index()
        index.order = "unique"
        index.group = 1.5
        try index.save()
        let duplicate = K.Index()
        duplicate.order = "unique"
        expectDatabaseError(.constraint) { try duplicate.save() }
        #expect(duplicate.id == nil)
        duplicate.order = "other"
        try duplicate.upsert()
        #expect(try K.Index.order(by: \.$order).pluck(\.$order) == ["other", "unique"])

        let transaction = K.Transaction()
        transaction.when = Date(timeIntervalSince1970: 86_400)
        transaction.select = Data([0, 1])
        transaction.default = "null"
        try transaction.save()
        let again = try #require(try K.Transaction.findFirst(where: ["default": "null"]))
        #expect(again.select == Data([0, 1]) && again.when == transaction.when)
        #expect(try K.Transaction.fetch(sql: "SELECT * FROM \"transaction\" WHERE \"when\" IS NOT NULL").count == 1)

        // Deleting the group cascades to its orders through the keyword-named foreign key.
        #expect(try group.delete())
        #expect(try K.Order.countAll() == 0)
        #expect(try K.Group.deleteAll() == 0)
        print("RELIABILITY hostile keywords: Order, Group, Index, Transaction with columns order, group, when, select, default: create/save/find/where/order/relations work")
    }
}
