import Foundation

// Reading `Decimal` from the three storage classes that hold numbers, without going through
// `Decimal(string:)` (about half a microsecond a value) when the value is short, which is
// what prices and measures are. Every fast result equals what `Decimal(string:)` gives for the
// same digits; anything unusual takes that general path.

extension Decimal {
    private static let posix = Locale(identifier: "en_US_POSIX")

    /// The decimal written by the shortest digits that read back as `real` (the digits of
    /// `String(real)`: `0.1` gives 0.1, not 0.1000000000000000055…); nil for NaN, infinities and
    /// magnitudes `Decimal` cannot hold.
    ///
    /// Short values (up to about 15 significant digits) are found without text: for k = 0, 1,
    /// 2… the nearest integer m to `real × 10^k` is tried, and the first m with
    /// `m / 10^k == real` is the answer. That is exact because 10^k (k ≤ 22) and m are exact
    /// doubles, so the division rounds m × 10^-k correctly, exactly as reading its text would;
    /// and while the rounding interval of `real`, scaled by 10^k, is narrower than 1/4, it holds
    /// at most one integer, which is then the nearest one to the scaled value, so no shorter (or
    /// closer) candidate is missed. Past that width, for zero, and for large values, the digits
    /// come from `String(real)`.
    @inline(__always)
    static func shortestDigits(of real: Double) -> Decimal? {
        if let decimal = shortDecimal(real) { return decimal }
        return real.isFinite ? Decimal(string: String(real), locale: posix) : nil
    }

    /// The text-free path of ``shortestDigits(of:)``, or nil when it cannot decide.
    @inline(__always)
    private static func shortDecimal(_ real: Double) -> Decimal? {
        let magnitude = real.magnitude
        // Also false for NaN.
        guard magnitude > 0, magnitude < 1e15 else { return nil }
        let ulp = magnitude.ulp
        var scale = 1.0
        var k = 0
        while k <= 22 {
            // Width of the interval of values that round to `real`, scaled (exact: ulp is a
            // power of two); the scaled product is within `width` of its exact value.
            let width = ulp * scale
            if width >= 0.25 { return nil }
            let scaled = magnitude * scale
            // The nearest integer, halves away from zero like `rounded()`, without a libm call:
            // scaled < width × 2^53 < 2^51 here, so adding 0.5 is exact.
            let integer = UInt64(scaled + 0.5)
            let rounded = Double(integer)
            if (scaled - rounded).magnitude <= width * 2, rounded / scale == magnitude {
                return Decimal(sign: real.sign, exponent: -k, significand: Decimal(integer))
            }
            scale *= 10
            k += 1
        }
        return nil
    }

    /// Parses decimal text: an optional sign, digits with at most one point (at least one digit),
    /// an optional exponent (`e` or `E`, optional sign, digits); nothing else, not even spaces.
    /// Nil for anything else, and for magnitudes `Decimal` cannot hold.
    static func parse(_ text: String) -> Decimal? {
        if let decimal = text.utf8.withContiguousStorageIfAvailable({ parse($0) }) { return decimal }
        var copy = text
        return copy.withUTF8 { parse($0) }
    }

    /// ``parse(_:)-(String)`` over UTF-8 bytes (a statement's own buffer when reading a row).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Decimal? {
        var index = 0
        let count = bytes.count
        var negative = false
        if index < count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        // Mantissa: the significant digits (leading zeros skipped) go into `significand` while
        // there are at most 18 of them.
        var significand: UInt64 = 0
        var significantDigits = 0
        var anyDigit = false
        var fractionDigits = 0
        var seenPoint = false
        while index < count {
            let byte = bytes[index]
            if byte >= 48 && byte <= 57 {
                anyDigit = true
                if seenPoint { fractionDigits += 1 }
                if significantDigits > 0 || byte != 48 {
                    significantDigits += 1
                    if significantDigits <= 18 { significand = significand * 10 + UInt64(byte - 48) }
                }
            } else if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
            } else {
                break
            }
            index += 1
        }
        guard anyDigit else { return nil }
        var exponent = 0
        if index < count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if index < count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var exponentDigits = 0
            while index < count, bytes[index] >= 48, bytes[index] <= 57 {
                // Capped: anything this large is out of Decimal's range either way.
                if exponent < 100_000 { exponent = exponent * 10 + Int(bytes[index] - 48) }
                exponentDigits += 1
                index += 1
            }
            guard exponentDigits > 0 else { return nil }
            if exponentNegative { exponent = -exponent }
        }
        guard index == count else { return nil }

        let scale = exponent - fractionDigits
        if significantDigits > 0, significantDigits <= 18, (-100...100).contains(scale) {
            return Decimal(sign: negative ? .minus : .plus, exponent: scale, significand: Decimal(significand))
        }
        // Zero, long mantissas, large exponents: the text is well-formed, Foundation reads it.
        return Decimal(string: String(decoding: bytes, as: UTF8.self), locale: posix)
    }
}
