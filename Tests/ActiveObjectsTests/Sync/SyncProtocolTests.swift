import Foundation
import Testing
@testable import ActiveObjects

/// The hand-written JSON of the protocol's messages reads back exactly through the `Codable`
/// decoding the hub and the engine use.
@Suite struct SyncProtocolTests {
    static let awkwardTexts = ["", "plain", "quote \" backslash \\ slash /", "tab\tnew\nline\rreturn", "\u{0}\u{1}\u{1F}\u{7F}",
                               "é – 🚀 日本語", "\u{2028}\u{2029}", String(repeating: "x", count: 5000)]
    static let awkwardReals = [0.0, -0.0, 0.1, 1e-5, 1e-300, Double.leastNonzeroMagnitude, 1e300, Double.greatestFiniteMagnitude, -2.5,
                               Double.infinity, -Double.infinity, 123456789.123456789]

    @Test func everyValueRoundTrips() throws {
        var values: [DatabaseValue] = [.null, .integer(0), .integer(Int64.max), .integer(Int64.min), .integer(-1),
                                       .blob(Data()), .blob(Data([0, 255, 1, 2, 3]))]
        values += Self.awkwardTexts.map(DatabaseValue.text)
        values += Self.awkwardReals.map(DatabaseValue.real)
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<200 {
            values.append(.real(Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator))))
            values.append(.integer(Int64.random(in: Int64.min...Int64.max, using: &generator)))
        }
        values = values.filter { if case .real(let real) = $0 { return !real.isNaN } else { return true } }
        let rows = values.enumerated().map { index, value in
            SyncRow(table: "t\"\(index)", key: .text("k\\\(index)"),
                    fields: ["c\n\(index)": SyncField(value: value, stamp: SyncStamp(time: Int64(index) << 16, node: Int64.min + Int64(index))),
                             "+": SyncField(value: .null, stamp: SyncStamp(time: Int64.max, node: Int64.max))])
        }
        let request = SyncRequest(version: 1, device: -7, user: "ü\"ser", push: rows, since: 99, limit: 3)
        let decoded = try JSONDecoder().decode(SyncRequest.self, from: SyncJSONWriter.encode(request))
        #expect(decoded.device == -7 && decoded.user == "ü\"ser" && decoded.since == 99 && decoded.limit == 3)
        #expect(decoded.push.count == rows.count)
        for (original, back) in zip(rows, decoded.push) {
            #expect(back.table == original.table && back.key == original.key)
            #expect(back.fields.keys.sorted() == original.fields.keys.sorted())
            for (column, field) in original.fields {
                let other = back.fields[column]
                #expect(other?.stamp == field.stamp)
                switch (field.value, other?.value) {
                case let (.real(a), .real(b)?): #expect(a.bitPattern == b.bitPattern, "\(a) read back as \(b)")
                default: #expect(other?.value == field.value)
                }
            }
        }
        let reply = SyncReply(version: 1, accepted: 2, rows: rows, cursor: Int64.max, more: true)
        let readBack = try JSONDecoder().decode(SyncReply.self, from: SyncJSONWriter.encode(reply))
        #expect(readBack.accepted == 2 && readBack.cursor == Int64.max && readBack.more && readBack.rows.count == rows.count)
        // The same text JSONEncoder gives the Codable conformances, up to the order of keys.
        let viaCodable = try JSONDecoder().decode(SyncReply.self, from: JSONEncoder().encode(reply))
        #expect(viaCodable.rows.map(\.key) == readBack.rows.map(\.key))
    }
}
