import Foundation

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
        if year >= 0, (1...12).contains(month) {
            return Self.daysSince1970(year: year, month: month, day: day)
        }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The same count for years from 0 on, in unsigned arithmetic: the years are shifted by one
    /// 400-year era (146,097 days) so that the year before March of year 0 stays positive.
    @inline(__always)
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = UInt(bitPattern: (month <= 2 ? year - 1 : year) &+ 400)
        let era = y / 400
        let yoe = y &- era &* 400
        let mp = UInt(bitPattern: month > 2 ? month &- 3 : month &+ 9)
        let doy = (153 &* mp &+ 2) / 5 &+ UInt(bitPattern: day) &- 1
        let doe = yoe &* 365 &+ yoe / 4 &- yoe / 100 &+ doy
        return Int(bitPattern: era &* 146_097 &+ doe) &- 719_468 &- 146_097
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

    /// `yyyy-MM-dd HH:mm:ss` (or with `T`), and the same with `.SSS`. The first 19 bytes are
    /// read as three little-endian 64-bit words (bytes 0–7, 8–15 and 11–18), whose digits and
    /// separators are all checked with a few word operations.
    @inline(__always)
    private static func parseFixedWidth(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        let raw = UnsafeRawPointer(b.baseAddress!)
        // "yyyy-MM-", "dd HH:mm", "HH:mm:ss", each byte XORed with "0": digits become 0…9.
        let a = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)) ^ 0x3030_3030_3030_3030
        let c = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) ^ 0x3030_3030_3030_3030
        let e = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 11, as: UInt64.self)) ^ 0x3030_3030_3030_3030
        // A byte holds a digit when its high nibble is 0 and adding 6 does not carry into it;
        // the masks keep the digit positions (byte i is bits 8i…8i+7).
        func allDigits(_ x: UInt64, _ mask: UInt64) -> Bool {
            ((x | (x &+ 0x0606_0606_0606_0606)) & 0xF0F0_F0F0_F0F0_F0F0 & mask) == 0
        }
        let separator = UInt8(truncatingIfNeeded: c >> 16) ^ 0x30
        guard allDigits(a, 0x00FF_FF00_FFFF_FFFF), allDigits(c, 0xFFFF_00FF_FF00_FFFF),
              allDigits(e, 0xFFFF_0000_0000_0000),
              a & 0xFF00_00FF_0000_0000 == 0x1D00_001D_0000_0000,   // "-" at 4 and 7
              c & 0x0000_FF00_0000_0000 == 0x0000_0A00_0000_0000,   // ":" at 13
              e & 0x0000_FF00_0000_0000 == 0x0000_0A00_0000_0000,   // ":" at 16
              separator == UInt8(ascii: " ") || separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t")
        else { return nil }
        // The two-digit number at bytes i and i+1; the separators are cleared first, so that no
        // byte exceeds 9 × 10 + 9 and nothing carries into the next byte.
        let pairsA = Self.pairs(a & 0x00FF_FF00_FFFF_FFFF), pairsC = Self.pairs(c & 0xFFFF_00FF_FF00_FFFF)
        let pairsE = Self.pairs(e & 0xFFFF_0000_0000_0000)
        func pair(_ pairs: UInt64, _ byte: Int) -> Int { Int(truncatingIfNeeded: (pairs >> (8 * byte)) & 0xFF) }

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
        let year = pair(pairsA, 0) &* 100 &+ pair(pairsA, 2), month = pair(pairsA, 5), day = pair(pairsC, 0)
        let hour = pair(pairsC, 3), minute = pair(pairsC, 6), second = pair(pairsE, 6)
        guard CivilDate(year: year, month: month, day: day).isValid, hour <= 23, minute <= 59, second <= 60 else {
            return nil
        }
        let days = CivilDate.daysSince1970(year: year, month: month, day: day)
        let whole = Double(days &* 86_400 &+ hour &* 3600 &+ minute &* 60 &+ second)
        return Date(timeIntervalSince1970: whole + fraction)
    }

    /// Byte i of the result is 10 × byte i + byte i+1 of `digits` (bytes of at most 9).
    @inline(__always)
    private static func pairs(_ digits: UInt64) -> UInt64 { digits &* 10 &+ (digits >> 8) }

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
