import CSQLite
import Foundation
import Testing
@testable import ActiveObjects

enum Mood: String { case happy, sad }
extension Mood: ColumnValue {}

enum Priority: Int { case low = 1, high = 10 }
extension Priority: ColumnValue {}

/// Swift values into SQLite and back: exact, or a thrown error.
@Suite struct ColumnValueTests {
    let db: Database

    init() throws {
        db = try Database.inMemory()
        try db.execute("CREATE TABLE v(id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB, a)")
    }

    /// Stores `value` in column `column` of a new row and returns the row id.
    @discardableResult
    func store(_ value: any ColumnValue, in column: String = "a") throws -> Int64 {
        try db.execute("INSERT INTO v(\(column)) VALUES (?)", [value])
        return try #require(db.scalar("SELECT last_insert_rowid()") as Int64?)
    }

    func read<T: ColumnValue>(_ column: String, id: Int64, as type: T.Type = T.self) throws -> T {
        let rows = try db.rows("SELECT \(column) FROM v WHERE id = ?", [id])
        return try #require(rows.first)[column]
    }

    func storageClass(_ column: String, id: Int64) throws -> String {
        try #require(db.scalar("SELECT typeof(\(column)) FROM v WHERE id = ?", [id]) as String?)
    }

    func roundTrip<T: ColumnValue>(_ value: T, in column: String = "a") throws -> T {
        try read(column, id: store(value, in: column))
    }

    // MARK: Text

    @Test func stringsWithNULAndEmojiRoundTrip() throws {
        let values = ["a\0b", "\0", "", "emoji 👩‍👩‍👧‍👦 🇨🇭", "ünïcödé", String(repeating: "x\0y", count: 1000)]
        for value in values {
            let id = try store(value, in: "t")
            #expect(try read("t", id: id) as String == value)
            #expect(try storageClass("t", id: id) == "text")
            // SQLite holds every byte, not a C string cut at the NUL.
            let bytes: Int? = try db.scalar("SELECT length(CAST(t AS BLOB)) FROM v WHERE id = ?", [id])
            #expect(bytes == value.utf8.count)
        }
        #expect(try db.scalar("SELECT ?", ["a\0b"]) == "a\0b")
    }

    @Test func invalidUTF8IsRepaired() throws {
        let id = try store(Data([0x61, 0xFF, 0x62]), in: "b")
        try db.execute("UPDATE v SET t = CAST(b AS TEXT) WHERE id = ?", [id])
        #expect(try read("t", id: id) as String == "a\u{FFFD}b")
    }

    // MARK: Integers

    @Test func int64ExtremesRoundTrip() throws {
        for value in [Int64.min, Int64.min + 1, -1, 0, 1, Int64.max - 1, Int64.max] {
            #expect(try roundTrip(value, in: "i") == value)
            #expect(try roundTrip(Int(value), in: "i") == Int(value))
        }
        #expect(try roundTrip(UInt64(Int64.max), in: "i") == UInt64(Int64.max))
        #expect(try roundTrip(UInt32.max, in: "i") == UInt32.max)
        #expect(try roundTrip(Int8.min, in: "i") == Int8.min)
    }

    @Test func integralRealReadsAsIntButAFractionThrows() throws {
        let whole = try store(3.0, in: "r")
        #expect(try storageClass("r", id: whole) == "real")
        #expect(try read("r", id: whole) as Int == 3)
        let fraction = try store(3.7, in: "r")
        expectActiveObjectError({ _ = try read("r", id: fraction) as Int }, matches: \.isTypeMismatch)
        let huge = try store(1e30, in: "r")
        expectActiveObjectError({ _ = try read("r", id: huge) as Int64 }, matches: \.isTypeMismatch)
        let infinite = try store(Double.infinity, in: "r")
        expectActiveObjectError({ _ = try read("r", id: infinite) as Int }, matches: \.isTypeMismatch)
    }

    @Test func textInAnIntegerColumnIsAMismatchNotZero() throws {
        let id = try store("abc", in: "i")
        #expect(try storageClass("i", id: id) == "text")   // INTEGER affinity cannot convert it
        let error = expectActiveObjectError({ _ = try read("i", id: id) as Int }, matches: \.isTypeMismatch)
        #expect(error?.description.contains("abc") == true)
        expectActiveObjectError({ let _: Int? = try db.scalar("SELECT i FROM v WHERE id = ?", [id]) },
                                matches: \.isTypeMismatch)
        let blob = try store(Data([1, 2]), in: "a")
        expectActiveObjectError({ _ = try read("a", id: blob) as Int }, matches: \.isTypeMismatch)
    }

    @Test func outOfRangeIntegersThrowOnRead() throws {
        let id = try store(300, in: "i")
        #expect(try read("i", id: id) as Int16 == 300)
        expectActiveObjectError({ _ = try read("i", id: id) as Int8 }, matches: \.isTypeMismatch)
        expectActiveObjectError({ _ = try read("i", id: id) as UInt8 }, matches: \.isTypeMismatch)
        let negative = try store(-1, in: "i")
        expectActiveObjectError({ _ = try read("i", id: negative) as UInt64 }, matches: \.isTypeMismatch)
        expectActiveObjectError({ _ = try read("i", id: negative) as UInt32 }, matches: \.isTypeMismatch)
    }

    @Test func uint64AboveInt64MaxIsRefusedAsAnArgument() throws {
        let tooBig = UInt64(Int64.max) + 1
        expectActiveObjectError({ try store(tooBig, in: "i") }, matches: \.isInvalidArgument)
        expectActiveObjectError({ try store(UInt64.max, in: "i") }, matches: \.isInvalidArgument)
        expectActiveObjectError({ let _: Int? = try db.scalar("SELECT ?", [UInt.max]) }, matches: \.isInvalidArgument)
        #expect(try count(db, "SELECT count(*) FROM v") == 0)
    }

    @Test func boolIsZeroOrOne() throws {
        for value in [true, false] {
            let id = try store(value, in: "i")
            #expect(try read("i", id: id) as Bool == value)
            #expect(try read("i", id: id) as Int == (value ? 1 : 0))
            #expect(try storageClass("i", id: id) == "integer")
        }
        let two = try store(2, in: "i")
        expectActiveObjectError({ _ = try read("i", id: two) as Bool }, matches: \.isTypeMismatch)
    }

    // MARK: Floating point

    @Test func doublesRoundTripIncludingInfinities() throws {
        for value in [0.1, -2.5e-300, Double.pi, Double.greatestFiniteMagnitude, Double.infinity, -Double.infinity] {
            let id = try store(value, in: "r")
            #expect(try read("r", id: id) as Double == value)
            #expect(try storageClass("r", id: id) == "real")
        }
    }

    @Test func negativeZeroReadsAsZero() throws {
        let id = try store(-0.0, in: "r")
        let value: Double = try read("r", id: id)
        #expect(value == 0)
        #expect(value.sign == .plus)
    }

    @Test func nanIsRefusedAsAnArgument() throws {
        expectActiveObjectError({ try store(Double.nan, in: "r") }, matches: \.isInvalidArgument)
        expectActiveObjectError({ try store(Float.nan, in: "r") }, matches: \.isInvalidArgument)
        expectActiveObjectError({ try store(Decimal.nan, in: "t") }, matches: \.isInvalidArgument)
        #expect(try count(db, "SELECT count(*) FROM v") == 0)
    }

    @Test func floatsRoundTrip() throws {
        for value: Float in [1.5, 0.1, -Float.greatestFiniteMagnitude, .leastNonzeroMagnitude, .infinity] {
            #expect(try roundTrip(value, in: "r") == value)
        }
        let tooBig = try store(1e300, in: "r")
        expectActiveObjectError({ _ = try read("r", id: tooBig) as Float }, matches: \.isTypeMismatch)
    }

    // MARK: Decimal, UUID, URL, Data

    @Test func decimalIsExactText() throws {
        let text = "12345678901234567890.123456789"
        let decimal = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")))
        let id = try store(decimal, in: "t")
        #expect(try storageClass("t", id: id) == "text")
        #expect(try read("t", id: id) as String == text)
        #expect(try read("t", id: id) as Decimal == decimal)
        // A Double could not have held it.
        #expect(Decimal(Double(text)!) != decimal)
        for other in ["0", "-1.5", "0.0001", "-98765432109876543210"] {
            let value = try #require(Decimal(string: other, locale: Locale(identifier: "en_US_POSIX")))
            #expect(try roundTrip(value, in: "t") == value)
        }
        let garbage = try store("12abc", in: "t")
        expectActiveObjectError({ _ = try read("t", id: garbage) as Decimal }, matches: \.isTypeMismatch)
    }

    @Test func uuidAsTextAndAsBlob() throws {
        let uuid = UUID()
        let id = try store(uuid, in: "t")
        #expect(try storageClass("t", id: id) == "text")
        #expect(try read("t", id: id) as String == uuid.uuidString.lowercased())
        #expect(try read("t", id: id) as UUID == uuid)
        let upper = try store(uuid.uuidString.uppercased(), in: "t")
        #expect(try read("t", id: upper) as UUID == uuid)

        let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
        #expect(bytes.count == 16)
        let blob = try store(bytes, in: "b")
        #expect(try read("b", id: blob) as UUID == uuid)
        let short = try store(bytes.prefix(15), in: "b")
        expectActiveObjectError({ _ = try read("b", id: short) as UUID }, matches: \.isTypeMismatch)
    }

    @Test func invalidUUIDTextThrows() throws {
        for text in ["not-a-uuid", "", String(UUID().uuidString.dropLast())] {
            let id = try store(text, in: "t")
            expectActiveObjectError({ _ = try read("t", id: id) as UUID }, matches: \.isTypeMismatch)
        }
    }

    @Test func urlsRoundTrip() throws {
        let urls = ["https://example.com/a%20b?q=1#frag", "file:///tmp/x.sqlite", "mailto:joe@example.com"]
        for text in urls {
            let url = try #require(URL(string: text))
            let id = try store(url, in: "t")
            #expect(try read("t", id: id) as String == url.absoluteString)
            #expect(try read("t", id: id) as URL == url)
        }
        let empty = try store("", in: "t")
        expectActiveObjectError({ _ = try read("t", id: empty) as URL }, matches: \.isTypeMismatch)
    }

    @Test func emptyBlobReadsAsEmptyDataNotNil() throws {
        let id = try store(Data(), in: "b")
        #expect(try storageClass("b", id: id) == "blob")
        let value: Data? = try read("b", id: id)
        #expect(value == Data())
        let direct: Data = try read("b", id: id)
        #expect(direct.isEmpty)
    }

    @Test func blobsRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        let data = Data((0..<1000).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        #expect(try roundTrip(data, in: "b") == data)
    }

    @Test func largeValuesUseTheSixtyFourBitAPIs() throws {
        let size = 5 * 1024 * 1024
        var bytes = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 4096) { bytes[index] = UInt8(truncatingIfNeeded: index / 4096 + 1) }
        let data = Data(bytes)
        let id = try store(data, in: "b")
        #expect(try db.scalar("SELECT length(b) FROM v WHERE id = ?", [id]) == size)
        #expect(try read("b", id: id) as Data == data)

        let text = String(repeating: "0123456789", count: size / 10)
        let textID = try store(text, in: "t")
        #expect(try read("t", id: textID) as String == text)
    }

    @Test func valuesOverTheLengthLimitThrowTooBig() throws {
        let previous = db.writer.setLimit(SQLITE_LIMIT_LENGTH, 1_000_000)
        #expect(previous > 1_000_000)
        let twoMegabytes = 2_000_000
        let error = expectDatabaseError(.tooBig) { try store(Data(count: twoMegabytes), in: "b") }
        #expect(error?.message.contains("too big") == true)
        expectDatabaseError(.tooBig) { try store(String(repeating: "x", count: twoMegabytes), in: "t") }
        #expect(try count(db, "SELECT count(*) FROM v") == 0)
        // Under the limit is fine.
        let id = try store(Data(count: 900_000), in: "b")
        #expect(try read("b", id: id) as Data == Data(count: 900_000))
    }

    // MARK: Optional and enums

    @Test func optionalNilIsNull() throws {
        let missing: String? = nil
        let id = try store(missing, in: "t")
        #expect(try storageClass("t", id: id) == "null")
        #expect(try read("t", id: id) as String? == nil)
        #expect(try read("t", id: id) as Int? == nil)
        // NULL into a non-optional is a mismatch, not "" or 0.
        expectActiveObjectError({ _ = try read("t", id: id) as String }, matches: \.isTypeMismatch)
        expectActiveObjectError({ _ = try read("t", id: id) as Int }, matches: \.isTypeMismatch)

        let present: Int? = 5
        let other = try store(present, in: "i")
        #expect(try storageClass("i", id: other) == "integer")
        #expect(try read("i", id: other) as Int? == 5)
        let wrongType = try store("x", in: "t")
        expectActiveObjectError({ _ = try read("t", id: wrongType) as Int? }, matches: \.isTypeMismatch)
    }

    @Test func rawRepresentableEnums() throws {
        let happy = try store(Mood.happy, in: "t")
        #expect(try read("t", id: happy) as String == Mood.happy.rawValue)
        #expect(try read("t", id: happy) as Mood == .happy)
        let high = try store(Priority.high, in: "i")
        #expect(try storageClass("i", id: high) == "integer")
        #expect(try read("i", id: high) as Int == Priority.high.rawValue)
        #expect(try read("i", id: high) as Priority == .high)
        #expect(Mood.columnType == .text)
        #expect(Priority.columnType == .integer)

        let unknownMood = try store("angry", in: "t")
        expectActiveObjectError({ _ = try read("t", id: unknownMood) as Mood }, matches: \.isTypeMismatch)
        let unknownPriority = try store(5, in: "i")
        expectActiveObjectError({ _ = try read("i", id: unknownPriority) as Priority }, matches: \.isTypeMismatch)
        let none: Mood? = nil
        #expect(try roundTrip(none, in: "t") == nil)
    }

    @Test func columnTypesAndNullability() {
        #expect(Int.columnType == .integer)
        #expect(Bool.columnType == .integer)
        #expect(Double.columnType == .real)
        #expect(String.columnType == .text)
        #expect(Data.columnType == .blob)
        #expect(UUID.columnType == .text)
        #expect(Decimal.columnType == .text)
        #expect(!Int.isNullable)
        #expect(Optional<Int>.isNullable)
        #expect(Optional<Int>.columnType == .integer)
    }

    @Test func mismatchErrorsNameColumnExpectedAndFound() throws {
        let id = try store(300, in: "i")
        let error = try #require(expectActiveObjectError({ _ = try read("i", id: id) as Int8 }, matches: \.isTypeMismatch))
        guard case let .typeMismatch(_, column, _, expected, found) = error else { return }
        #expect(column == "i")
        #expect(expected == "Int8")
        #expect(found.contains("300"))
    }
}
