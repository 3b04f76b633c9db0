import Foundation
import Testing
@testable import ActiveObjects

/// The date-text parser reads SQLite's bytes in place, with a fixed-width fast path for the
/// common forms; it must give exactly what the parser it replaced gave (a copy of which,
/// `LegacyDateText`, is kept below), for valid and invalid text alike.
@Suite struct DateTextTests {
    /// Parses `text` through the String entry point and the byte entry point, checks that they
    /// agree with each other and with the legacy parser, and returns the result.
    @discardableResult
    static func expectSameAsLegacy(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Date? {
        let legacy = LegacyDateText.parse(text)
        let viaString = DateText.parse(text)
        let viaBytes = Array(text.utf8).withUnsafeBufferPointer { DateText.parse($0) }
        #expect(bitPattern(viaString) == bitPattern(legacy), "\(text)", sourceLocation: sourceLocation)
        #expect(bitPattern(viaBytes) == bitPattern(legacy), "\(text)", sourceLocation: sourceLocation)
        return viaBytes
    }

    /// The exact bits of a date's time interval (nil stays nil), so that equality is identity.
    static func bitPattern(_ date: Date?) -> UInt64? { date?.timeIntervalSinceReferenceDate.bitPattern }

    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// A date-like text in one of the accepted shapes, with fields sometimes out of range.
    static func randomDateText(using rng: inout SeededGenerator) -> String {
        let year = Int.random(in: 1...9999, using: &rng)
        let month = Int.random(in: 0...13, using: &rng)
        let day = Int.random(in: 0...32, using: &rng)
        let hour = Int.random(in: 0...25, using: &rng)
        let minute = Int.random(in: 0...61, using: &rng)
        let second = Int.random(in: 0...61, using: &rng)
        let date = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        let separator = ["T", " ", "t", " "].randomElement(using: &rng)!
        let time = pad(hour, 2) + ":" + pad(minute, 2)
        let seconds = ":" + pad(second, 2)
        let fraction = (["." , ","].randomElement(using: &rng)!)
            + String((0..<Int.random(in: 1...9, using: &rng)).map { _ in "0123456789".randomElement(using: &rng)! })
        let zone = ["", "Z", "z", "+02:00", "-05:30", "+0100", "-03", "+23:59", "+24:00", "-00:60"]
            .randomElement(using: &rng)!
        switch Int.random(in: 0...9, using: &rng) {
        case 0: return date
        case 1: return date + separator + time + zone
        case 2, 3: return date + separator + time + seconds
        case 4: return date + separator + time + seconds + zone
        case 5: return date + separator + time + seconds + "." + pad(Int.random(in: 0...999, using: &rng), 3)
        case 6: return date + separator + time + seconds + fraction + zone
        case 7: return pad(year, 4) + pad(month, 2) + pad(day, 2)
        case 8: return pad(year, 4) + pad(month, 2) + pad(day, 2) + pad(hour, 2) + pad(minute, 2) + pad(second, 2)
        default: return date + " " + time + seconds
        }
    }

    /// `text` with one byte replaced, inserted or removed, or cut short.
    static func mutate(_ text: String, using rng: inout SeededGenerator) -> String {
        var bytes = Array(text.utf8)
        let alphabet = Array("0123456789-:. TZz+,x\u{0}".utf8) + [0xC3, 0xA9, 0xFF]
        let position = Int.random(in: 0..<max(1, bytes.count), using: &rng)
        switch Int.random(in: 0...3, using: &rng) {
        case 0 where !bytes.isEmpty: bytes[position] = alphabet.randomElement(using: &rng)!
        case 1: bytes.insert(alphabet.randomElement(using: &rng)!, at: position)
        case 2 where !bytes.isEmpty: bytes.remove(at: position)
        default: bytes = Array(bytes.prefix(position))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func randomTextsParseExactlyAsBefore() {
        var rng = SeededGenerator(seed: 0xDA7E)
        var parsed = 0
        for _ in 0..<40_000 {
            let text = Self.randomDateText(using: &rng)
            if Self.expectSameAsLegacy(text) != nil { parsed += 1 }
            Self.expectSameAsLegacy(Self.mutate(text, using: &rng))
            Self.expectSameAsLegacy(Self.mutate(Self.mutate(text, using: &rng), using: &rng))
        }
        // The generator must exercise both outcomes in earnest.
        #expect(parsed > 10_000 && parsed < 39_000, "\(parsed)")
    }

    @Test func fixedWidthFormsParseExactlyAsBefore() {
        // Every day of a few years, at many times, in the two forms the fast path reads.
        var rng = SeededGenerator(seed: 19)
        for year in [1, 1600, 1899, 1900, 1969, 1970, 2000, 2012, 2023, 2024, 9999] {
            for dayOfYear in 0..<372 {
                let month = dayOfYear / 31 + 1, day = dayOfYear % 31 + 1
                let time = Self.pad(Int.random(in: 0...23, using: &rng), 2) + ":"
                    + Self.pad(Int.random(in: 0...59, using: &rng), 2) + ":" + Self.pad(Int.random(in: 0...60, using: &rng), 2)
                let text = Self.pad(year, 4) + "-" + Self.pad(month, 2) + "-" + Self.pad(day, 2) + " " + time
                Self.expectSameAsLegacy(text)
                Self.expectSameAsLegacy(text + "." + Self.pad(Int.random(in: 0...999, using: &rng), 3))
                Self.expectSameAsLegacy(text.replacingOccurrences(of: " ", with: "T") + ",5")
            }
        }
    }

    @Test func everyByteAtEveryPositionOfTheFixedWidthForms() {
        // Any byte value in any position of the two fast forms: the same verdict as before.
        for text in ["2014-09-23 10:11:12", "2014-09-23T10:11:12.125", "2000-02-29 23:59:60", "0000-01-01 00:00:00"] {
            let bytes = Array(text.utf8)
            for position in bytes.indices {
                for value in 0...255 {
                    var changed = bytes
                    changed[position] = UInt8(value)
                    let expected = LegacyDateText.parse(bytes: changed)
                    let actual = changed.withUnsafeBufferPointer { DateText.parse($0) }
                    #expect(Self.bitPattern(actual) == Self.bitPattern(expected), "\(changed)")
                }
            }
        }
    }

    @Test func knownValues() throws {
        let reference = Date(timeIntervalSince1970: 1_411_467_072)   // 2014-09-23 10:11:12 UTC
        #expect(Self.expectSameAsLegacy("2014-09-23 10:11:12") == reference)
        #expect(Self.expectSameAsLegacy("2014-09-23T10:11:12") == reference)
        #expect(Self.expectSameAsLegacy("2014-09-23 10:11:12.250") == reference.addingTimeInterval(0.25))
        #expect(Self.expectSameAsLegacy("2014-09-23 10:11:12,250") == reference.addingTimeInterval(0.25))
        #expect(Self.expectSameAsLegacy("2014-09-23T12:11:12+02:00") == reference)
        #expect(Self.expectSameAsLegacy("20140923101112") == reference)
        #expect(Self.expectSameAsLegacy("2016-12-31 23:59:60") == Date(timeIntervalSince1970: 1_483_228_800))
        for invalid in ["2014-02-30 10:11:12", "2014-09-23 24:00:00", "2014-09-23 10:60:00",
                        "2014-09-23 10:11:61", "2014-13-01 00:00:00", "2014-09-23x10:11:12",
                        "2014-09-23 10:11:1a", "2014/09/23 10:11:12", "2014-09-23 10:11:12.",
                        "2014-09-23 10:11:12.12a", "２０14-09-23 10:11:12", ""] {
            #expect(Self.expectSameAsLegacy(invalid) == nil, "\(invalid)")
        }
    }
}

// MARK: - The parser as it was before it read bytes in place (kept verbatim as the reference)

private enum LegacyDateText {
    static func parse(_ text: String) -> Date? { parse(bytes: Array(text.utf8)) }

    static func parse(bytes: [UInt8]) -> Date? {
        var scanner = LegacyByteScanner(bytes)
        let civil: CivilDate
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offsetSeconds = 0

        if scanner.bytes.count >= 8, scanner.bytes.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            guard scanner.bytes.count == 8 || scanner.bytes.count == 14 else { return nil }
            civil = CivilDate(year: scanner.digits(4)!, month: scanner.digits(2)!, day: scanner.digits(2)!)
            if scanner.bytes.count == 14 {
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
        guard scanner.atEnd, isValid(civil), hour <= 23, minute <= 59, second <= 60 else { return nil }
        let whole = Double(civil.daysSince1970 * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds)
        return Date(timeIntervalSince1970: whole + fraction)
    }

    static func isValid(_ civil: CivilDate) -> Bool {
        guard (1...12).contains(civil.month), civil.day >= 1 else { return false }
        let leap = (civil.year % 4 == 0 && civil.year % 100 != 0) || civil.year % 400 == 0
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return civil.day <= lengths[civil.month - 1]
    }
}

private struct LegacyByteScanner {
    let bytes: [UInt8]
    var index = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

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
