import Foundation
import Testing
@testable import ActiveObjects

/// The four date strategies, and reading every legacy text form.
@Suite struct DateStrategyTests {
    /// 2014-09-23 10:11:12 UTC.
    static let reference = Date(timeIntervalSince1970: 1_411_467_072)

    static func database(_ strategy: DateStrategy) throws -> Database {
        var options = Database.Options()
        options.dateStrategy = strategy
        let db = try Database.inMemory(options: options)
        try db.execute("CREATE TABLE d(id INTEGER PRIMARY KEY, at)")
        return db
    }

    static func utcFormatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = format
        return formatter
    }

    /// Seconds since 1970 of midnight UTC on January 1st of `year`, counted day by day in the
    /// proleptic Gregorian calendar (independent of the library's arithmetic).
    static func startOfYear(_ year: Int) -> TimeInterval {
        func length(_ y: Int) -> Int { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 366 : 365 }
        var days = 0
        if year >= 1970 {
            for y in 1970..<year { days += length(y) }
        } else {
            for y in year..<1970 { days -= length(y) }
        }
        return TimeInterval(days) * 86_400
    }

    /// Stores `date` and returns (storage class, stored value, date read back).
    static func roundTrip(_ date: Date, _ db: Database) throws -> (String, DatabaseValue, Date) {
        try db.execute("INSERT INTO d(at) VALUES (?)", [date])
        let row = try #require(try db.rows("SELECT typeof(at) AS type, at FROM d ORDER BY id DESC LIMIT 1").first)
        return (try row["type"], try row["at"], try row["at"])
    }

    static func milliseconds(_ date: Date) -> Double { (date.timeIntervalSince1970 * 1000).rounded() }

    // MARK: Writing

    @Test func iso8601TextIsTheDefaultAndKeepsMilliseconds() throws {
        #expect(Database.Options().dateStrategy == .iso8601Text)
        let db = try Self.database(.iso8601Text)
        let date = Self.reference.addingTimeInterval(0.125)
        let (type, stored, back) = try Self.roundTrip(date, db)
        #expect(type == "text")
        #expect(stored == .text(Self.utcFormatter("yyyy-MM-dd HH:mm:ss.SSS").string(from: date)))
        #expect(stored == .text("2014-09-23 10:11:12.125"))
        #expect(back == date)

        // Precision: the millisecond, rounded.
        let fine = Self.reference.addingTimeInterval(0.123_456)
        let (_, _, fineBack) = try Self.roundTrip(fine, db)
        #expect(Self.milliseconds(fineBack) == Self.milliseconds(fine))
        #expect(abs(fineBack.timeIntervalSince(fine)) < 0.000_5 + 1e-9)

        // SQLite's date functions understand it.
        let seconds: Int? = try db.scalar("SELECT CAST(strftime('%s', at) AS INTEGER) FROM d ORDER BY id LIMIT 1")
        #expect(seconds == Int(Self.reference.timeIntervalSince1970))
    }

    @Test func iso8601TextSortsChronologically() throws {
        let db = try Self.database(.iso8601Text)
        let dates = [86_400.0 * 365 * 40, -1_000_000_000, 0.5, 1_411_467_072.999, 253_402_300_799, -62_000_000_000]
            .map(Date.init(timeIntervalSince1970:))
        for date in dates { try db.execute("INSERT INTO d(at) VALUES (?)", [date]) }
        let read = try db.rows("SELECT at FROM d ORDER BY at").map { try $0["at"] as Date }
        #expect(read.map(Self.milliseconds) == dates.sorted().map(Self.milliseconds))
    }

    @Test func unixSecondsIsReal() throws {
        let db = try Self.database(.unixSeconds)
        let date = Self.reference.addingTimeInterval(0.123_456)
        let (type, stored, back) = try Self.roundTrip(date, db)
        #expect(type == "real")
        #expect(stored == .real(date.timeIntervalSince1970))
        #expect(back == date)
    }

    @Test func unixMillisecondsIsInteger() throws {
        let db = try Self.database(.unixMilliseconds)
        let date = Self.reference.addingTimeInterval(0.123_6)
        let (type, stored, back) = try Self.roundTrip(date, db)
        #expect(type == "integer")
        #expect(stored == .integer(Int64(Self.milliseconds(date))))
        #expect(Self.milliseconds(back) == Self.milliseconds(date))
        #expect(back.timeIntervalSince1970 == Self.milliseconds(date) / 1000)
        let before1970 = Date(timeIntervalSince1970: -1234.5)
        let (_, oldStored, oldBack) = try Self.roundTrip(before1970, db)
        #expect(oldStored == .integer(-1_234_500))
        #expect(oldBack == before1970)
    }

    @Test func compactTextKeepsSeconds() throws {
        let db = try Self.database(.compactText)
        let date = Self.reference.addingTimeInterval(0.7)
        let (type, stored, back) = try Self.roundTrip(date, db)
        #expect(type == "text")
        #expect(stored == .text(Self.utcFormatter("yyyyMMddHHmmss").string(from: Self.reference)))
        #expect(stored == .text("20140923101112"))
        #expect(back == Self.reference)   // the fraction is dropped
    }

    @Test(arguments: [DateStrategy.iso8601Text, .unixSeconds, .unixMilliseconds, .compactText])
    func everyStrategyRoundTripsToItsPrecision(_ strategy: DateStrategy) throws {
        let db = try Self.database(strategy)
        let dates = [0, 1, -1, 1_411_467_072.25, -86_400 * 365.25 * 100, 4_102_444_800]
            .map(Date.init(timeIntervalSince1970:))
        for date in dates {
            let (_, _, back) = try Self.roundTrip(date, db)
            switch strategy {
            case .unixSeconds:
                #expect(back == date)
            case .iso8601Text, .unixMilliseconds:
                #expect(Self.milliseconds(back) == Self.milliseconds(date))
            case .compactText:
                #expect(back.timeIntervalSince1970 == date.timeIntervalSince1970.rounded(.down))
            }
        }
    }

    @Test(arguments: [DateStrategy.iso8601Text, .compactText])
    func extremeAndOldYearsRoundTripAsText(_ strategy: DateStrategy) throws {
        let db = try Self.database(strategy)
        let yearOne = Date(timeIntervalSince1970: Self.startOfYear(1))
        let lastSecond = Date(timeIntervalSince1970: Self.startOfYear(10_000) - 1)
        let moonLanding = Date(timeIntervalSince1970: -14_182_940)   // 1969-07-20 20:17:40 UTC
        let leapDay1600 = Date(timeIntervalSince1970: Self.startOfYear(1600) + 59 * 86_400)  // 1600-02-29
        let expectations: [(Date, String, String)] = [
            (yearOne, "0001-01-01 00:00:00.000", "00010101000000"),
            (lastSecond, "9999-12-31 23:59:59.000", "99991231235959"),
            (moonLanding, "1969-07-20 20:17:40.000", "19690720201740"),
            (leapDay1600, "1600-02-29 00:00:00.000", "16000229000000"),
        ]
        for (date, iso, compact) in expectations {
            let (type, stored, back) = try Self.roundTrip(date, db)
            #expect(type == "text")
            #expect(stored == .text(strategy == .compactText ? compact : iso))
            #expect(back == date)
        }
        // A pre-1970 date with a fraction keeps its milliseconds (iso) or its second (compact).
        let fractional = Date(timeIntervalSince1970: -1.25)
        let (_, stored, back) = try Self.roundTrip(fractional, db)
        if strategy == .iso8601Text {
            #expect(stored == .text("1969-12-31 23:59:58.750"))
            #expect(back == fractional)
        } else {
            #expect(stored == .text("19691231235958"))
            #expect(back == Date(timeIntervalSince1970: -2))
        }
    }

    @Test func yearsOutsideTextRangeAreRefused() throws {
        let db = try Self.database(.iso8601Text)
        let tooLate = Date(timeIntervalSince1970: Self.startOfYear(10_000))
        let tooEarly = Date(timeIntervalSince1970: Self.startOfYear(1) - 1)
        for date in [tooLate, tooEarly] {
            expectActiveObjectError({ try db.execute("INSERT INTO d(at) VALUES (?)", [date]) },
                                    matches: \.isInvalidArgument)
        }
        #expect(try count(db, "SELECT count(*) FROM d") == 0)
        // Numbers have no such limit.
        let seconds = try Self.database(.unixSeconds)
        let (_, _, back) = try Self.roundTrip(tooLate, seconds)
        #expect(back == tooLate)
    }

    // MARK: Reading legacy forms

    @Test(arguments: [
        "2014-09-23 10:11:12", "2014-09-23T10:11:12Z", "2014-09-23 10:11:12.000", "20140923101112",
        "2014-09-23T10:11:12", "2014-09-23 10:11:12Z", "2014-09-23T10:11:12.000Z", "2014-09-23t10:11:12z",
        "2014-09-23T12:11:12+02:00", "2014-09-23T12:11:12+0200", "2014-09-23T12:11:12+02",
        "2014-09-23T05:11:12-05:00", "2014-09-23T10:11:12.000+00:00", "2014-09-23 10:11:12,000",
    ])
    func legacyTextFormsRead(_ text: String) throws {
        for strategy in [DateStrategy.iso8601Text, .unixSeconds, .unixMilliseconds, .compactText] {
            let db = try Self.database(strategy)
            let date: Date? = try db.scalar("SELECT ?", [text])
            #expect(date == Self.reference, "\(text) with \(strategy)")
        }
    }

    @Test func dateOnlyAndMinuteFormsRead() throws {
        let db = try Self.database(.iso8601Text)
        let midnight = Self.reference.timeIntervalSince1970 - (10 * 3600 + 11 * 60 + 12)
        #expect(try db.scalar("SELECT ?", ["2014-09-23"]) == Date(timeIntervalSince1970: midnight))
        #expect(try db.scalar("SELECT ?", ["20140923"]) == Date(timeIntervalSince1970: midnight))
        #expect(try db.scalar("SELECT ?", ["2014-09-23 10:11"]) == Date(timeIntervalSince1970: midnight + 10 * 3600 + 11 * 60))
        let fraction: Date? = try db.scalar("SELECT ?", ["2014-09-23 10:11:12.5"])
        #expect(fraction == Self.reference.addingTimeInterval(0.5))
    }

    @Test func sqliteDateFunctionsOutputReads() throws {
        let db = try Self.database(.iso8601Text)
        let fromSQLite: Date? = try db.scalar("SELECT datetime(?, 'unixepoch')", [Int(Self.reference.timeIntervalSince1970)])
        #expect(fromSQLite == Self.reference)
        let now: Date? = try db.scalar("SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')")
        #expect(abs(try #require(now).timeIntervalSinceNow) < 60)
    }

    @Test(arguments: [
        "2014-02-30", "garbage", "", "2014-13-01", "2014-00-10", "2014-09-31", "2014-09-23 24:00:00",
        "2014-09-23 10:60:00", "2014-09-23T10:11:12+25:00", "2014-09-23T10:11:12.", "2014-09-23 10:11:12 junk",
        "2014923", "201409231011", "2013-02-29", "1900-02-29",
    ])
    func invalidDatesThrowTypeMismatch(_ text: String) throws {
        let db = try Self.database(.iso8601Text)
        try db.execute("INSERT INTO d(at) VALUES (?)", [text])
        let rows = try db.rows("SELECT at FROM d")
        expectActiveObjectError({ _ = try rows[0]["at"] as Date }, matches: \.isTypeMismatch)
        expectActiveObjectError({ let _: Date? = try db.scalar("SELECT at FROM d") }, matches: \.isTypeMismatch)
    }

    @Test func leapDaysOfLeapYearsRead() throws {
        let db = try Self.database(.iso8601Text)
        let leap2000 = Date(timeIntervalSince1970: Self.startOfYear(2000) + 59 * 86_400)
        let leap2024 = Date(timeIntervalSince1970: Self.startOfYear(2024) + 59 * 86_400)
        #expect(try db.scalar("SELECT ?", ["2000-02-29"]) == leap2000)
        #expect(try db.scalar("SELECT ?", ["2024-02-29 00:00:00"]) == leap2024)
    }

    @Test func compactTextInANumericColumnReads() throws {
        // A legacy `DATETIME` column has NUMERIC affinity: SQLite turns the compact text into
        // the INTEGER 20140923101112, which must still read as that date, not as seconds.
        let db = try Self.database(.compactText)
        try db.execute("CREATE TABLE legacy(created DATETIME)")
        try db.execute("INSERT INTO legacy VALUES (?)", [Self.reference])
        #expect(try db.scalar("SELECT typeof(created) FROM legacy") == "integer")
        #expect(try db.scalar("SELECT created FROM legacy") == Self.reference)
        let row = try #require(try db.rows("SELECT created FROM legacy").first)
        #expect(try row["created"] as Date == Self.reference)
    }

    @Test func numbersReadAsDatesInTheStrategysUnit() throws {
        let seconds = Int64(Self.reference.timeIntervalSince1970)
        let textDB = try Self.database(.iso8601Text)
        #expect(try textDB.scalar("SELECT ?", [seconds]) == Self.reference)
        #expect(try textDB.scalar("SELECT ?", [Double(seconds) + 0.5]) == Self.reference.addingTimeInterval(0.5))
        let millisDB = try Self.database(.unixMilliseconds)
        #expect(try millisDB.scalar("SELECT ?", [seconds * 1000 + 250]) == Self.reference.addingTimeInterval(0.25))
        let blob = try textDB.rows("SELECT x'00'")
        expectActiveObjectError({ _ = try blob[0][0] as Date }, matches: \.isTypeMismatch)
    }
}
