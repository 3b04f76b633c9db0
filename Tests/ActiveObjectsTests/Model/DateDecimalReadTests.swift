import Foundation
import Testing
@testable import ActiveObjects

/// Model properties of type `Date`, `Date?`, `Decimal` and `Decimal?` are filled by the
/// statement directly (dates parsed from SQLite's text bytes, decimals made from REAL and
/// INTEGER without text). Whatever path a value takes, the model must hold exactly what the
/// general conversion (a `Row` read) gives, and a value that does not fit must still throw
/// `typeMismatch` naming the table, column and row id.
@Suite struct DateDecimalReadTests {
    final class Stamp: ModelTestRecord {
        override class var tableName: String { "stamp" }
        @Column var at = Date(timeIntervalSince1970: 0)
        @Column var maybeAt: Date? = nil
        @Column var amount: Decimal = 0
        @Column var maybeAmount: Decimal? = nil
    }

    final class MillisStamp: ModelTestRecord {
        override class var tableName: String { "stamp" }
        override class var dateStrategy: DateStrategy? { .unixMilliseconds }
        @Column var at = Date(timeIntervalSince1970: 0)
        @Column var maybeAt: Date? = nil
    }

    final class CompactStamp: ModelTestRecord {
        override class var tableName: String { "stamp" }
        override class var dateStrategy: DateStrategy? { .compactText }
        @Column var at = Date(timeIntervalSince1970: 0)
        @Column var maybeAt: Date? = nil
    }

    /// A table with the loosest types (no affinity), so that every storage class stays as inserted.
    static func createLooseTable(_ db: Database) throws {
        try db.execute("CREATE TABLE stamp (id INTEGER PRIMARY KEY, at, maybeAt, amount, maybeAmount)")
    }

    /// The general conversion of column `column` of row `id`.
    static func rowValue<T: ColumnValue>(_ db: Database, _ column: String, id: Int64, as: T.Type = T.self) throws -> T {
        try #require(db.rows("SELECT \(column) FROM stamp WHERE id = ?", [id]).first)[column]
    }

    @Test func textDatesOfEveryFormReadAsTheGeneralConversionDoes() throws {
        try withModelDB { db in
            try Self.createLooseTable(db)
            let texts = ["2014-09-23 10:11:12", "2014-09-23T10:11:12", "2014-09-23 10:11:12.125",
                         "2014-09-23T10:11:12.123456Z", "2014-09-23T12:11:12+02:00", "2014-09-23",
                         "20140923101112", "20140923", "0001-01-01 00:00:00", "9999-12-31 23:59:59.999",
                         "1969-07-20 20:17:40", "2016-12-31 23:59:60"]
            for (index, text) in texts.enumerated() {
                try db.execute("INSERT INTO stamp (id, at, maybeAt, amount) VALUES (?, ?, ?, 0)",
                               [Int64(index + 1), text, index % 2 == 0 ? text : nil])
            }
            let stamps = try Stamp.findAll()
            #expect(stamps.count == texts.count)
            for stamp in stamps {
                let id = try #require(stamp.id)
                let expected: Date = try Self.rowValue(db, "at", id: id)
                #expect(stamp.at == expected, "\(texts[Int(id) - 1])")
                #expect(stamp.maybeAt == (try Self.rowValue(db, "maybeAt", id: id) as Date?))
                #expect(stamp.at.timeIntervalSinceReferenceDate.bitPattern
                        == DateText.parse(texts[Int(id) - 1])?.timeIntervalSinceReferenceDate.bitPattern)
                #expect(!stamp.hasChanges)
            }
            #expect(try Stamp.find(id: 1)?.at == Date(timeIntervalSince1970: 1_411_467_072))
            #expect(try Stamp.find(id: 2)?.maybeAt == nil)
        }
    }

    @Test func numericDatesFollowTheModelsStrategy() throws {
        try withModelDB { db in
            try Self.createLooseTable(db)
            try db.execute("INSERT INTO stamp (id, at, maybeAt, amount) VALUES (1, 1411467072, 1411467072.5, 0)")
            try db.execute("INSERT INTO stamp (id, at, maybeAt, amount) VALUES (2, 20140923101112, '2014-09-23', 0)")
            let seconds = try #require(try Stamp.find(id: 1))
            #expect(seconds.at == Date(timeIntervalSince1970: 1_411_467_072))
            #expect(seconds.maybeAt == Date(timeIntervalSince1970: 1_411_467_072.5))
            let millis = try #require(try MillisStamp.find(id: 1))
            #expect(millis.at == Date(timeIntervalSince1970: 1_411_467.072))
            let compact = try #require(try CompactStamp.find(id: 2))
            #expect(compact.at == Date(timeIntervalSince1970: 1_411_467_072))
            #expect(compact.maybeAt == Date(timeIntervalSince1970: 1_411_430_400))
        }
    }

    @Test func decimalsFromRealIntegerTextAndNull() throws {
        try withModelDB { db in
            try Self.createLooseTable(db)
            var rng = SeededGenerator(seed: 0xDEC)
            var reals: [Double] = [32.38, 0.1, -4.5, 1e-5, 0.0, -0.0, 1.0 / 3, 123_456_789.125, 1e20, 2.5e-9]
            for _ in 0..<500 { reals.append(Double(Int.random(in: -10_000_000...10_000_000, using: &rng)) / 100) }
            for _ in 0..<100 { reals.append(Double.random(in: -1e6...1e6, using: &rng)) }
            for (index, real) in reals.enumerated() {
                try db.execute("INSERT INTO stamp (id, at, amount, maybeAmount) VALUES (?, 0, ?, ?)",
                               [Int64(index + 1), real, index % 3 == 0 ? nil : real])
            }
            let base = Int64(reals.count)
            try db.execute("INSERT INTO stamp (id, at, amount, maybeAmount) VALUES (?, 0, 42, -7)", [base + 1])
            try db.execute("INSERT INTO stamp (id, at, amount, maybeAmount) VALUES (?, 0, '12345678901234567890.123456789', '-0.000000000000000000001')",
                           [base + 2])
            try db.execute("INSERT INTO stamp (id, at, amount, maybeAmount) VALUES (?, 0, ?, ?)",
                           [base + 3, Int64.max, Int64.min])

            let stamps = try Stamp.findAll()
            #expect(stamps.count == reals.count + 3)
            for stamp in stamps {
                let id = try #require(stamp.id)
                let amount: Decimal = try Self.rowValue(db, "amount", id: id)
                let maybeAmount: Decimal? = try Self.rowValue(db, "maybeAmount", id: id)
                #expect(stamp.amount == amount && stamp.amount.description == amount.description, "row \(id)")
                #expect(stamp.maybeAmount == maybeAmount && stamp.maybeAmount?.description == maybeAmount?.description,
                        "row \(id)")
                if id <= base {
                    #expect(stamp.amount == Decimal(string: String(reals[Int(id) - 1]), locale: Locale(identifier: "en_US_POSIX")))
                }
            }
            #expect(try Stamp.find(id: 1)?.amount == Decimal(string: "32.38"))
            #expect(try Stamp.find(id: base + 1)?.maybeAmount == -7)
            #expect(try Stamp.find(id: base + 2)?.amount == Decimal(string: "12345678901234567890.123456789"))
        }
    }

    @Test func valuesThatDoNotFitThrowTypeMismatchWithTheRowID() throws {
        let cases: [(column: String, sql: String)] = [
            ("at", "'not a date'"), ("at", "'2014-02-30 10:11:12'"), ("at", "'2014-09-23 10:11:1x'"),
            ("at", "NULL"), ("at", "x'00'"),
            ("maybeAt", "'2014-09-23 25:00:00'"), ("maybeAt", "'garbage'"),
            ("amount", "NULL"), ("amount", "1e300"), ("amount", "'abc'"), ("amount", "x'01'"),
            ("maybeAmount", "-1e200"), ("maybeAmount", "'1.2.3'"),
        ]
        for (column, sql) in cases {
            try withModelDB { db in
                try Self.createLooseTable(db)
                try db.execute("INSERT INTO stamp (id, at, amount) VALUES (1, '2014-09-23', 1)")
                try db.execute("INSERT INTO stamp (id, at, amount) VALUES (9, '2014-09-23', 1)")
                try db.execute("UPDATE stamp SET \(column) = \(sql) WHERE id = 9")
                #expect(try Stamp.find(id: 1) != nil)
                for read in [{ _ = try Stamp.findAll() }, { _ = try Stamp.find(id: 9) }] as [() throws -> Void] {
                    let error = expectActiveObjectError(read)
                    let fields = try #require(error?.typeMismatchFields, "\(column) = \(sql)")
                    #expect(fields.table == "stamp" && fields.column == column && fields.rowID == 9, "\(column) = \(sql)")
                }
            }
        }
    }

    @Test func savedDatesAndDecimalsReadBack() throws {
        try withModelDB { db in
            try db.execute("""
                CREATE TABLE stamp (id INTEGER PRIMARY KEY, at TEXT NOT NULL, maybeAt TEXT,
                                    amount TEXT NOT NULL, maybeAmount NUMERIC)
                """)
            let stamp = Stamp()
            stamp.at = Date(timeIntervalSince1970: 1_411_467_072.125)
            stamp.maybeAt = nil
            stamp.amount = Decimal(string: "12345678901234567890.123456789")!
            stamp.maybeAmount = Decimal(string: "32.38")
            try stamp.save()
            let loaded = try #require(try Stamp.find(id: stamp.id!))
            #expect(loaded.at == stamp.at && loaded.maybeAt == nil)
            #expect(loaded.amount == stamp.amount)
            #expect(loaded.maybeAmount == stamp.maybeAmount)
            #expect(try db.scalar("SELECT typeof(maybeAmount) FROM stamp") == "real", "NUMERIC affinity made it a REAL")
            loaded.maybeAt = stamp.at
            try loaded.save()
            #expect(try Stamp.find(id: stamp.id!)?.maybeAt == stamp.at)
        }
    }
}
