import ActiveObjects
import Foundation

// The date parser alone: the `OrderDate` texts of the Northwind table (`yyyy-MM-dd HH:mm:ss`),
// parsed by ActiveObjects (its public entry point, `Date.fromDatabaseValue`, which reads every
// form it supports), by the hand-written parse of the C reference, and by Foundation's three
// parsers configured for exactly that layout in UTC.

/// One date parser under test.
struct DateParser {
    let name: String
    /// Parses every string; returns the sum of the whole seconds since 1970 (a checksum).
    let parseAll: ([String]) -> Int
}

func makeDateParsers() -> [DateParser] {
    let utc = TimeZone(identifier: "UTC")!
    let context = ValueContext()

    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = utc
    formatter.calendar = Calendar(identifier: .gregorian)
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"

    let iso = ISO8601DateFormatter()
    iso.timeZone = utc
    iso.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]

    let style = Date.ISO8601FormatStyle(dateSeparator: .dash, dateTimeSeparator: .space, timeSeparator: .colon,
                                        timeZone: utc)
        .year().month().day().time(includingFractionalSeconds: false)

    func sum(_ strings: [String], _ parse: (String) -> Date?) -> Int {
        strings.reduce(0) { $0 &+ Int(parse($1)?.timeIntervalSince1970 ?? -1) }
    }
    return [
        DateParser(name: "ActiveObjects") { strings in
            sum(strings) { Date.fromDatabaseValue(.text($0), in: context) }
        },
        DateParser(name: "hand-written (raw-C)") { strings in
            sum(strings) { string in
                string.utf8.withContiguousStorageIfAvailable { bytes in
                    bytes.count == 19 ? RawOrderReading.parseDate(bytes.baseAddress!) : nil
                } ?? nil
            }
        },
        DateParser(name: "DateFormatter") { strings in sum(strings) { formatter.date(from: $0) } },
        DateParser(name: "ISO8601DateFormatter") { strings in sum(strings) { iso.date(from: $0) } },
        DateParser(name: "Date.ISO8601FormatStyle") { strings in sum(strings) { try? style.parse($0) } },
    ]
}

/// The median time per string of each parser.
struct DateParseResult {
    let name: String
    let nanosecondsPerString: Double
}

/// Runs every parser over `strings`, `warmups` + `rounds` times (parsers alternating, rotating
/// start), and checks that all of them read the same dates.
func runDateParseBenchmark(strings: [String], sizes: Sizes) throws -> [DateParseResult] {
    let parsers = makeDateParsers()
    var samples = Array(repeating: [Double](), count: parsers.count)
    var expected: Int?
    for round in 0..<(sizes.warmups + sizes.dateParseRounds) {
        for k in parsers.indices {
            let index = (k + round) % parsers.count
            let (milliseconds, checksum) = measure { parsers[index].parseAll(strings) }
            if let expected, expected != checksum {
                throw BenchError("date-parse: \(parsers[index].name) computed checksum \(checksum), expected \(expected)")
            }
            expected = checksum
            if round >= sizes.warmups { samples[index].append(milliseconds) }
        }
    }
    return parsers.indices.map { index in
        DateParseResult(name: parsers[index].name,
                        nanosecondsPerString: medianOf(samples[index]) * 1_000_000 / Double(strings.count))
    }
}

func printDateParseTable(_ results: [DateParseResult], count: Int) {
    guard let ours = results.first(where: { $0.name == subjectName }) else { return }
    print("| parser (\(count) strings `yyyy-MM-dd HH:mm:ss`) | ns per string | × ActiveObjects |")
    print("|---|---:|---:|")
    for result in results {
        print("| \(result.name) | \(format(result.nanosecondsPerString, decimals: 1)) | \(format(result.nanosecondsPerString / ours.nanosecondsPerString, decimals: 1))× |")
    }
}
