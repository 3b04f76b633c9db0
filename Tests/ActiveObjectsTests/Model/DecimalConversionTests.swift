import Foundation
import Testing
@testable import ActiveObjects

/// Reading `Decimal` without `Decimal(string:)` on the common path. A REAL is the decimal of its
/// shortest round-trip digits: it used to be computed as `Decimal(string: String(real))`, and
/// the text-free conversion must give the very same `Decimal` for every value. Decimal text
/// must read as `Decimal(string:)` reads it, and text that is not entirely a decimal number
/// must be refused (it used to be read up to the first stray character).
@Suite struct DecimalConversionTests {
    static let posix = Locale(identifier: "en_US_POSIX")

    /// The conversion as it was: through the shortest text.
    static func legacy(_ real: Double) -> Decimal? {
        real.isFinite ? Decimal(string: String(real), locale: posix) : nil
    }

    /// Checks that the conversion gives what the legacy one gives: same value, same digits and
    /// exponent, and (where `Decimal` is swift-foundation's) the same bytes.
    static func expectSameAsLegacy(_ real: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = legacy(real)
        let actual = Decimal.shortestDigits(of: real)
        #expect(actual == expected, "\(real)", sourceLocation: sourceLocation)
        #expect(actual?.description == expected?.description, "\(real)", sourceLocation: sourceLocation)
        #expect(actual?.exponent == expected?.exponent, "\(real)", sourceLocation: sourceLocation)
        #if !canImport(Darwin)
        #expect(actual.map(bytes) == expected.map(bytes), "\(real)", sourceLocation: sourceLocation)
        #endif
    }

    static func bytes(_ decimal: Decimal) -> [UInt8] { withUnsafeBytes(of: decimal) { Array($0) } }

    @Test func pricesWithCents() {
        var rng = SeededGenerator(seed: 0xCE)
        for _ in 0..<50_000 {
            Self.expectSameAsLegacy(Double(Int.random(in: -100_000_000...100_000_000, using: &rng)) / 100)
        }
        for cents in 0...2_000 { Self.expectSameAsLegacy(Double(cents) / 100) }
    }

    @Test func shortValuesAtEveryScale() {
        var rng = SeededGenerator(seed: 0x5CA1E)
        for _ in 0..<50_000 {
            let digits = Int.random(in: 1...16, using: &rng)
            let mantissa = Int64.random(in: 1..<Int64(pow(10.0, Double(digits))), using: &rng)
            let scale = Int.random(in: -12...22, using: &rng)
            let real = Double(mantissa) / pow(10, Double(scale))
            Self.expectSameAsLegacy(Bool.random(using: &rng) ? real : -real)
        }
    }

    @Test func arbitraryDoubles() {
        var rng = SeededGenerator(seed: 0xB175)
        for _ in 0..<30_000 {
            // Any bit pattern: every exponent, subnormals, NaNs, infinities.
            Self.expectSameAsLegacy(Double(bitPattern: rng.next()))
            // Full-precision values in the range the text-free path covers.
            Self.expectSameAsLegacy(Double.random(in: -1e15...1e15, using: &rng))
            Self.expectSameAsLegacy(Double.random(in: 0..<1, using: &rng))
            Self.expectSameAsLegacy(Double(sign: .plus, exponent: Int.random(in: -40...60, using: &rng),
                                           significand: Double.random(in: 1..<2, using: &rng)))
        }
    }

    @Test func edgeValues() {
        var values: [Double] = [0, -0.0, 0.1, 0.2, 0.3, 1.0 / 3, 2.675, 1e-5, 1e-7, 1e-22, 1e-23,
                                999_999_999_999_999.9, 1e15, 1e15 - 0.125, 9_007_199_254_740_992, 9_007_199_254_740_994,
                                .greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude,
                                .ulpOfOne, .nan, .infinity, -.infinity, .signalingNaN]
        for exponent in -80...80 {
            values.append(pow(2, Double(exponent)))
            values.append(pow(10, Double(exponent)))
            values.append(pow(2, Double(exponent)).nextUp)
            values.append(pow(2, Double(exponent)).nextDown)
            values.append(pow(10, Double(exponent)).nextUp)
            values.append(pow(10, Double(exponent)).nextDown)
        }
        for value in values {
            Self.expectSameAsLegacy(value)
            Self.expectSameAsLegacy(-value)
        }
    }

    @Test func knownValues() throws {
        #expect(Decimal.shortestDigits(of: 32.38) == Decimal(string: "32.38"))
        #expect(Decimal.shortestDigits(of: 0.1) == Decimal(string: "0.1"))
        #expect(Decimal.shortestDigits(of: -4.5) == Decimal(string: "-4.5"))
        #expect(Decimal.shortestDigits(of: 1e-5) == Decimal(string: "0.00001"))
        #expect(Decimal.shortestDigits(of: 100) == Decimal(100))
        #expect(Decimal.shortestDigits(of: 1e300) == nil, "beyond Decimal's range")
        #expect(Decimal.shortestDigits(of: .nan) == nil)
        #expect(Decimal.shortestDigits(of: .infinity) == nil)
    }

    // MARK: Text

    /// Checks that well-formed `text` parses exactly as `Decimal(string:)` reads it.
    static func expectSameAsFoundation(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = Decimal(string: text, locale: posix)
        let actual = Decimal.parse(text)
        #expect(actual != nil, "\(text)", sourceLocation: sourceLocation)
        #expect(actual == expected, "\(text)", sourceLocation: sourceLocation)
        #expect(actual?.description == expected?.description, "\(text)", sourceLocation: sourceLocation)
        #expect(actual?.exponent == expected?.exponent, "\(text)", sourceLocation: sourceLocation)
        #if !canImport(Darwin)
        #expect(actual.map(bytes) == expected.map(bytes), "\(text)", sourceLocation: sourceLocation)
        #endif
    }

    @Test func wellFormedTextReadsAsFoundationReadsIt() {
        var rng = SeededGenerator(seed: 0x7E47)
        func digits(_ count: Int) -> String {
            String((0..<count).map { _ in "0123456789".randomElement(using: &rng)! })
        }
        for _ in 0..<30_000 {
            var text = ["", "-", "+"].randomElement(using: &rng)!
            let integerDigits = Int.random(in: 0...22, using: &rng)
            let fractionDigits = Int.random(in: integerDigits == 0 ? 1...12 : 0...12, using: &rng)
            text += digits(integerDigits)
            if fractionDigits > 0 || Bool.random(using: &rng) { text += "." + digits(fractionDigits) }
            if Int.random(in: 0...3, using: &rng) == 0 {
                text += ["e", "E"].randomElement(using: &rng)! + ["", "-", "+"].randomElement(using: &rng)!
                text += String(Int.random(in: 0...140, using: &rng))
            }
            if Decimal(string: text, locale: Self.posix) == nil {
                #expect(Decimal.parse(text) == nil, "\(text): out of Decimal's range")
            } else {
                Self.expectSameAsFoundation(text)
            }
        }
        for text in ["0", "-0", "0.000", "32.38", "32.380", "007.50", ".5", "5.", "+5", "-.5", "1e5", "1E+5",
                     "1e-5", "1.5e3", "150e-2", "1e127", "1e-128", "123456789012345678",
                     "1234567890123456789", "12345678901234567890.123456789", "-98765432109876543210",
                     "0.00000000000000000000000000000000000000000000001"] {
            Self.expectSameAsFoundation(text)
        }
    }

    @Test func textThatIsNotEntirelyADecimalIsRefused() {
        for text in ["", "+", "-", ".", "e5", "1e", "1e+", "1.2.3", "1-2", "--1", "+-1", "1e5e5", "1e5.5",
                     " 1", "1 ", "0x10", "1,5", "12abc", "١٢", "1e128", "1e-200", "NaN", "inf"] {
            #expect(Decimal.parse(text) == nil, "\(text)")
            #expect(Decimal.fromDatabaseValue(.text(text), in: ValueContext()) == nil, "\(text)")
        }
    }
}
