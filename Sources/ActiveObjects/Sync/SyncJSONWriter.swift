import Foundation

/// Writes the protocol's messages as JSON, by hand: the same text `JSONEncoder` would give the
/// `Codable` conformances in `SyncProtocol.swift` (which decode them), about seven times faster —
/// encoding was a third of the time of a large synchronization.
struct SyncJSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    static func encode(_ request: SyncRequest) -> Data {
        var writer = SyncJSONWriter(capacity: 256 + request.push.count * 300)
        writer.raw("{\"v\":")
        writer.integer(Int64(request.version))
        writer.raw(",\"d\":")
        writer.integer(request.device)
        if let user = request.user {
            writer.raw(",\"u\":")
            writer.string(user)
        }
        writer.raw(",\"p\":")
        writer.rows(request.push)
        writer.raw(",\"s\":")
        writer.integer(request.since)
        writer.raw(",\"l\":")
        writer.integer(Int64(request.limit))
        writer.raw("}")
        return Data(writer.bytes)
    }

    static func encode(_ reply: SyncReply) -> Data {
        var writer = SyncJSONWriter(capacity: 256 + reply.rows.count * 300)
        writer.raw("{\"v\":")
        writer.integer(Int64(reply.version))
        writer.raw(",\"a\":")
        writer.integer(Int64(reply.accepted))
        writer.raw(",\"r\":")
        writer.rows(reply.rows)
        writer.raw(",\"c\":")
        writer.integer(reply.cursor)
        writer.raw(reply.more ? ",\"m\":true" : ",\"m\":false")
        if let hub = reply.hub {
            writer.raw(",\"h\":")
            writer.string(hub)
        }
        if reply.reset == true { writer.raw(",\"x\":true") }
        writer.raw("}")
        return Data(writer.bytes)
    }

    /// The bytes `row` takes in a message.
    static func size(of row: SyncRow) -> Int {
        var writer = SyncJSONWriter(capacity: 512)
        writer.rows([row])
        return writer.bytes.count - 1
    }

    private mutating func rows(_ rows: [SyncRow]) {
        raw("[")
        for (index, row) in rows.enumerated() {
            if index > 0 { raw(",") }
            raw("{\"t\":")
            string(row.table)
            raw(",\"k\":")
            value(row.key)
            raw(",\"f\":{")
            // Sorted, so that a row is always written the same way.
            for (position, (column, field)) in row.fields.sorted(by: { $0.key < $1.key }).enumerated() {
                if position > 0 { raw(",") }
                string(column)
                raw(":[")
                value(field.value)
                raw(",")
                integer(field.stamp.time)
                raw(",")
                integer(field.stamp.node)
                raw("]")
            }
            raw("}}")
        }
        raw("]")
    }

    private mutating func value(_ value: DatabaseValue) {
        switch value {
        case .null: raw("null")
        case .integer(let integer): self.integer(integer)
        case .text(let text): string(text)
        case .real(let real):
            raw("{\"r\":")
            if real.isFinite {
                // The shortest text that reads back as the same Double, e.g. 0.1, 1e-05, -0.0.
                raw(real.description)
            } else {
                raw(real > 0 ? "\"inf\"" : "\"-inf\"")
            }
            raw("}")
        case .blob(let data):
            raw("{\"b\":\"")
            raw(data.base64EncodedString())
            raw("\"}")
        }
    }

    private mutating func integer(_ value: Int64) { raw(String(value)) }

    private mutating func raw(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// A JSON string: quotes, backslashes and control characters escaped, the rest as UTF-8.
    private mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                }
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
