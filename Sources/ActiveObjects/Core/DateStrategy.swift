import Foundation

/// How `Date` values are stored: one strategy per database (``Database/Options/dateStrategy``),
/// overridable per model (`ActiveObject.dateStrategy`) to map tables other libraries wrote.
///
/// Whatever the strategy, reading accepts every text form below (with `T` or a space, with or
/// without a fraction, with `Z` or an offset such as `+02:00`), `yyyy-MM-dd`, and numbers, so
/// legacy databases load.
///
/// | strategy | stored as | precision |
/// |---|---|---|
/// | `.iso8601Text` | TEXT `2014-09-23 10:11:12.000` (UTC) | millisecond (rounded) |
/// | `.unixSeconds` | REAL seconds since 1970 | a `Double`'s (about a microsecond today) |
/// | `.unixMilliseconds` | INTEGER milliseconds since 1970 | millisecond (rounded) |
/// | `.compactText` | TEXT `20140923101112` (UTC) | second (fraction dropped) |
public enum DateStrategy: Sendable, Hashable {
    /// TEXT `"yyyy-MM-dd HH:mm:ss.SSS"` in UTC: sortable and understood by SQLite's date
    /// functions. The default.
    case iso8601Text
    /// REAL seconds since 1970-01-01 UTC (OCActiveObjects, FMPersisting).
    case unixSeconds
    /// INTEGER milliseconds since 1970-01-01 UTC (ormapper's Java side).
    case unixMilliseconds
    /// TEXT `"yyyyMMddHHmmss"` in UTC (ormapper on iOS).
    case compactText

    /// The SQL type of a date column under this strategy.
    var columnType: ColumnType {
        switch self {
        case .iso8601Text, .compactText: return .text
        case .unixSeconds: return .real
        case .unixMilliseconds: return .integer
        }
    }

    /// Encodes a date; text forms throw for years outside 1…9999.
    func encode(_ date: Date) throws -> DatabaseValue {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { throw ColumnValueError("the date \(date) is not finite") }
        switch self {
        case .unixSeconds:
            return .real(seconds)
        case .unixMilliseconds:
            guard let millis = Int64(exactly: (seconds * 1000).rounded()) else {
                throw ColumnValueError("the date \(date) is out of range for milliseconds")
            }
            return .integer(millis)
        case .iso8601Text, .compactText:
            let millis = (seconds * 1000).rounded()
            guard abs(millis) < 1e15 else { throw ColumnValueError("the date \(date) is out of range") }
            let totalMillis = Int64(millis)
            var days = totalMillis / 86_400_000
            var rest = totalMillis % 86_400_000
            if rest < 0 { rest += 86_400_000; days -= 1 }
            let civil = CivilDate(days: Int(days))
            guard (1...9999).contains(civil.year) else {
                throw ColumnValueError("the year \(civil.year) cannot be written as text (1…9999 only)")
            }
            let ms = Int(rest % 1000), secs = Int(rest / 1000)
            let hour = secs / 3600, minute = secs / 60 % 60, second = secs % 60
            if self == .compactText {
                return .text(pad(civil.year, 4) + pad(civil.month, 2) + pad(civil.day, 2)
                    + pad(hour, 2) + pad(minute, 2) + pad(second, 2))
            }
            return .text(pad(civil.year, 4) + "-" + pad(civil.month, 2) + "-" + pad(civil.day, 2) + " "
                + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2) + "." + pad(ms, 3))
        }
    }

    /// Decodes a date from any supported form; nil when the value is not a date.
    func decode(_ value: DatabaseValue) -> Date? {
        switch value {
        case .integer(let int):
            // A column with NUMERIC affinity (e.g. declared `DATETIME`) stores the compact
            // text "20140923101112" as the INTEGER 20140923101112: read it as that text.
            if self == .compactText, (10_000_101_000_000...99_991_231_235_959).contains(int) {
                return DateText.parse(String(int))
            }
            return self == .unixMilliseconds
                ? Date(timeIntervalSince1970: Double(int) / 1000)
                : Date(timeIntervalSince1970: Double(int))
        case .real(let real):
            guard real.isFinite else { return nil }
            return self == .unixMilliseconds
                ? Date(timeIntervalSince1970: real / 1000)
                : Date(timeIntervalSince1970: real)
        case .text(let text):
            return DateText.parse(text)
        case .null, .blob:
            return nil
        }
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

/// A proleptic Gregorian calendar date, converted to and from days since 1970-01-01
/// (Howard Hinnant's `days_from_civil` algorithms), so that no `DateFormatter` or calendar
/// is needed on the hot path.
struct CivilDate {
    var year: Int, month: Int, day: Int

    init(year: Int, month: Int, day: Int) { (self.year, self.month, self.day) = (year, month, day) }

    init(days: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    }

    var daysSince1970: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    var isValid: Bool {
        guard day >= 1 else { return false }
        switch month {
        case 1, 3, 5, 7, 8, 10, 12: return day <= 31
        case 4, 6, 9, 11: return day <= 30
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return day <= (leap ? 29 : 28)
        default: return false
        }
    }
}

/// Parses the text forms of dates that SQLite databases contain, straight from their UTF-8
/// bytes (the statement's own buffer when reading a row: nothing is copied first).
enum DateText {
    /// Parses a string (its contiguous UTF-8 storage when it has one).
    static func parse(_ text: String) -> Date? {
        if let date = text.utf8.withContiguousStorageIfAvailable({ parse($0) }) { return date }
        var copy = text
        return copy.withUTF8 { parse($0) }
    }

    /// Accepts `yyyy-MM-dd`, `yyyy-MM-dd[T ]HH:mm[:ss[.fraction]][Z|±HH[:]MM|±HH]`,
    /// `yyyyMMdd` and `yyyyMMddHHmmss`. Returns nil for anything else, including impossible
    /// dates such as February 30.
    @inline(__always)
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        // The two forms almost every database holds go straight through; anything else, or
        // anything these reject, gets the general parser (which reads them identically).
        if bytes.count == 19 || bytes.count == 23, let date = parseFixedWidth(bytes) { return date }
        return parseGeneral(bytes)
    }

    /// `yyyy-MM-dd HH:mm:ss` (or with `T`), and the same with `.SSS`: fixed positions, one
    /// range check for all the digits.
    private static func parseFixedWidth(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        let separator = b[10]
        guard b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[13] == UInt8(ascii: ":"),
              b[16] == UInt8(ascii: ":"),
              separator == UInt8(ascii: " ") || separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t")
        else { return nil }
        // Digit values; any byte that is not a digit wraps to a value above 9.
        let y0 = b[0] &- 48, y1 = b[1] &- 48, y2 = b[2] &- 48, y3 = b[3] &- 48
        let mo0 = b[5] &- 48, mo1 = b[6] &- 48, d0 = b[8] &- 48, d1 = b[9] &- 48
        let h0 = b[11] &- 48, h1 = b[12] &- 48, mi0 = b[14] &- 48, mi1 = b[15] &- 48
        let s0 = b[17] &- 48, s1 = b[18] &- 48
        let largest = max(max(max(y0, y1), max(y2, y3)), max(max(mo0, mo1), max(d0, d1)),
                          max(max(h0, h1), max(mi0, mi1)), max(s0, s1))
        guard largest <= 9 else { return nil }
        var fraction = 0.0
        if b.count == 23 {
            let point = b[19]
            let f0 = b[20] &- 48, f1 = b[21] &- 48, f2 = b[22] &- 48
            guard point == UInt8(ascii: ".") || point == UInt8(ascii: ","), max(f0, max(f1, f2)) <= 9 else {
                return nil
            }
            // The general parser's arithmetic, step by step, so that both give the same Double.
            var scale = 0.1
            fraction += Double(f0) * scale
            scale /= 10
            fraction += Double(f1) * scale
            scale /= 10
            fraction += Double(f2) * scale
        }
        let civil = CivilDate(year: Int(y0) * 1000 + Int(y1) * 100 + Int(y2) * 10 + Int(y3),
                              month: Int(mo0) * 10 + Int(mo1), day: Int(d0) * 10 + Int(d1))
        return assemble(civil, hour: Int(h0) * 10 + Int(h1), minute: Int(mi0) * 10 + Int(mi1),
                        second: Int(s0) * 10 + Int(s1), fraction: fraction, offsetSeconds: 0)
    }

    /// Every accepted form.
    private static func parseGeneral(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var scanner = ByteScanner(bytes)
        let civil: CivilDate
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offsetSeconds = 0

        if bytes.count >= 8, bytes.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            // Compact forms: yyyyMMdd or yyyyMMddHHmmss.
            guard bytes.count == 8 || bytes.count == 14 else { return nil }
            civil = CivilDate(year: scanner.digits(4)!, month: scanner.digits(2)!, day: scanner.digits(2)!)
            if bytes.count == 14 {
                hour = scanner.digits(2)!; minute = scanner.digits(2)!; second = scanner.digits(2)!
            }
        } else {
            guard let year = scanner.digits(4), scanner.take(UInt8(ascii: "-")),
                  let month = scanner.digits(2), scanner.take(UInt8(ascii: "-")),
                  let day = scanner.digits(2) else { return nil }
            civil = CivilDate(year: year, month: month, day: day)
            if !scanner.atEnd {
                guard scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t"))
                        || scanner.take(UInt8(ascii: " ")),
                      let h = scanner.digits(2), scanner.take(UInt8(ascii: ":")),
                      let m = scanner.digits(2) else { return nil }
                hour = h; minute = m
                if scanner.take(UInt8(ascii: ":")) {
                    guard let s = scanner.digits(2) else { return nil }
                    second = s
                    if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
                        var scale = 0.1
                        var any = false
                        while let digit = scanner.digit() {
                            fraction += Double(digit) * scale
                            scale /= 10
                            any = true
                        }
                        guard any else { return nil }
                    }
                }
                if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
                    // UTC
                } else if let sign = scanner.sign() {
                    guard let oh = scanner.digits(2) else { return nil }
                    var om = 0
                    if scanner.take(UInt8(ascii: ":")) {
                        guard let m = scanner.digits(2) else { return nil }
                        om = m
                    } else if let m = scanner.digits(2) {
                        om = m
                    }
                    guard oh <= 23, om <= 59 else { return nil }
                    offsetSeconds = sign * (oh * 3600 + om * 60)
                }
            }
        }
        guard scanner.atEnd else { return nil }
        return assemble(civil, hour: hour, minute: minute, second: second, fraction: fraction,
                        offsetSeconds: offsetSeconds)
    }

    /// Checks the fields (a leap second, `:60`, is accepted) and makes the date.
    @inline(__always)
    private static func assemble(_ civil: CivilDate, hour: Int, minute: Int, second: Int,
                                 fraction: Double, offsetSeconds: Int) -> Date? {
        guard civil.isValid, hour <= 23, minute <= 59, second <= 60 else { return nil }
        let whole = Double(civil.daysSince1970 * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds)
        return Date(timeIntervalSince1970: whole + fraction)
    }
}

/// A cursor over ASCII bytes for the date parser.
private struct ByteScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    mutating func digit() -> Int? {
        guard index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 else { return nil }
        index += 1
        return Int(bytes[index - 1] - 48)
    }

    mutating func digits(_ count: Int) -> Int? {
        let start = index
        var value = 0
        for _ in 0..<count {
            guard let d = digit() else { index = start; return nil }
            value = value * 10 + d
        }
        return value
    }

    mutating func sign() -> Int? {
        if take(UInt8(ascii: "+")) { return 1 }
        if take(UInt8(ascii: "-")) { return -1 }
        return nil
    }
}
