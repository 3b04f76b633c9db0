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
