import Foundation

/// The synchronization protocol's messages, as JSON. One exchange is one request and its reply:
/// the device pushes a batch of changed rows and asks for the rows changed since its cursor.
///
/// Version 1:
///
/// ```text
/// request: {"v": 1, "d": <device node>, "u": <user, optional>, "p": [row…], "s": <cursor>, "l": <pull limit>}
/// reply:   {"v": 1, "a": <rows of "p" merged>, "r": [row…], "c": <new cursor>, "m": <more to pull?>,
///           "h": <hub id>, "x": <true when the cursor was unknown: the reply starts over>}
/// row:     {"t": <table>, "k": <key>, "f": {<column>: [<value>, <hlc>, <node>], "+": [null, …], "-": [null, …]}}
/// value:   null | <integer> | <text> | {"r": <real or "inf"/"-inf">} | {"b": <base64>}
/// ```
///
/// `"+"` and `"-"` are the row's insert and delete stamps. Every field carries the hybrid
/// logical clock stamp of the edit that wrote it; merging keeps, field by field, the value with
/// the greater stamp, so applying a message twice, late, or out of order changes nothing more.
enum SyncProtocol {
    /// The version this library speaks.
    static let version = 1
    /// The stamp field of a row's insert.
    static let insertedField = "+"
    /// The stamp field of a row's delete.
    static let deletedField = "-"

    static func isRowStateField(_ name: String) -> Bool { name == insertedField || name == deletedField }
}

/// A hybrid logical clock stamp: milliseconds since 1970 shifted left by 16 bits plus a
/// counter (`time`), and the node (device) that made the edit. Stamps order edits the same way
/// on every replica: by time, then by node.
struct SyncStamp: Comparable, Hashable, Sendable {
    var time: Int64
    var node: Int64

    static func < (lhs: SyncStamp, rhs: SyncStamp) -> Bool {
        lhs.time != rhs.time ? lhs.time < rhs.time : lhs.node < rhs.node
    }

    /// The clock's physical part for a moment given as a Julian day (what `julianday('now')`
    /// records in the change log).
    static func physical(julianDay: Double) -> Int64 {
        let milliseconds = (julianDay - 2440587.5) * 86_400_000
        guard milliseconds.isFinite, milliseconds > 0, milliseconds < Double(Int64.max >> 17) else { return 0 }
        return Int64(milliseconds) << 16
    }

    /// The clock's physical part now.
    static func physicalNow() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1000) << 16
    }

    /// The next value of a clock that is at `time` (saturating: a clock at its end stays there).
    static func after(_ time: Int64) -> Int64 { time == .max ? time : time + 1 }

    /// The latest stamp a hub accepts: a day ahead of its own clock. A device whose clock runs
    /// further ahead would win every later edit until real time caught up with it.
    static func latestAcceptable() -> Int64 { physicalNow() + (86_400_000 << 16) }
}

/// One field of a synchronized row on the wire: its value and the stamp of the edit that wrote it.
struct SyncField: Codable, Equatable, Sendable {
    var value: DatabaseValue
    var stamp: SyncStamp

    init(value: DatabaseValue, stamp: SyncStamp) {
        self.value = value
        self.stamp = stamp
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        value = try container.decode(WireValue.self).value
        let time = try container.decode(Int64.self)
        let node = try container.decode(Int64.self)
        guard time >= 0 else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a negative clock stamp")
        }
        stamp = SyncStamp(time: time, node: node)
        guard container.isAtEnd else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a field has more than [value, time, node]")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(WireValue(value))
        try container.encode(stamp.time)
        try container.encode(stamp.node)
    }
}

/// One row's synchronized state: its key and the fields an exchange carries.
struct SyncRow: Codable, Sendable {
    var table: String
    var key: DatabaseValue
    var fields: [String: SyncField]

    enum CodingKeys: String, CodingKey { case table = "t", key = "k", fields = "f" }

    init(table: String, key: DatabaseValue, fields: [String: SyncField]) {
        self.table = table
        self.key = key
        self.fields = fields
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        table = try container.decode(String.self, forKey: .table)
        key = try container.decode(WireValue.self, forKey: .key).value
        fields = try container.decode([String: SyncField].self, forKey: .fields)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(table, forKey: .table)
        try container.encode(WireValue(key), forKey: .key)
        try container.encode(fields, forKey: .fields)
    }

    /// Whether the row exists under these stamps: never deleted, or inserted again after its
    /// latest delete. A delete wins over every update, whatever its stamp.
    static func isAlive(inserted: SyncStamp?, deleted: SyncStamp?) -> Bool {
        guard let deleted else { return true }
        guard let inserted else { return false }
        return inserted > deleted
    }
}

/// A device's request: a batch of rows to merge, and where to resume pulling.
struct SyncRequest: Codable, Sendable {
    var version: Int
    var device: Int64
    var user: String?
    var push: [SyncRow]
    var since: Int64
    var limit: Int

    enum CodingKeys: String, CodingKey {
        case version = "v", device = "d", user = "u", push = "p", since = "s", limit = "l"
    }
}

/// A hub's reply: how many pushed rows it merged, the rows changed since the cursor, the new
/// cursor, and whether more rows wait.
struct SyncReply: Codable, Sendable {
    var version: Int
    var accepted: Int
    var rows: [SyncRow]
    var cursor: Int64
    var more: Bool
    /// The hub's identity: a device whose cursor came from another hub starts pulling again.
    var hub: String?
    /// The device's cursor was beyond the hub's last position (a hub restored from a backup):
    /// the reply starts from the beginning, and the device pushes everything again.
    var reset: Bool?

    enum CodingKeys: String, CodingKey {
        case version = "v", accepted = "a", rows = "r", cursor = "c", more = "m", hub = "h", reset = "x"
    }
}

/// A ``DatabaseValue`` as JSON (decoding; `SyncJSONWriter` writes the same shape), exactly: integers and text bare, reals and blobs tagged (so an
/// integer never comes back as a real, and a real keeps every bit, infinities included).
struct WireValue: Codable {
    var value: DatabaseValue

    init(_ value: DatabaseValue) { self.value = value }

    private enum Tag: String, CodingKey { case real = "r", blob = "b" }

    init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() { value = .null; return }
            // Text first: the most common value, and a failed attempt costs an error.
            if let text = try? single.decode(String.self) { value = .text(text); return }
            if let integer = try? single.decode(Int64.self) { value = .integer(integer); return }
        }
        let tagged = try decoder.container(keyedBy: Tag.self)
        if tagged.contains(.real) {
            if let real = try? tagged.decode(Double.self, forKey: .real) { value = .real(real); return }
            switch try tagged.decode(String.self, forKey: .real) {
            case "inf": value = .real(.infinity)
            case "-inf": value = .real(-.infinity)
            default:
                throw DecodingError.dataCorruptedError(forKey: .real, in: tagged, debugDescription: "not a real number")
            }
            return
        }
        let base64 = try tagged.decode(String.self, forKey: .blob)
        guard let data = Data(base64Encoded: base64) else {
            throw DecodingError.dataCorruptedError(forKey: .blob, in: tagged, debugDescription: "invalid base64")
        }
        value = .blob(data)
    }

    func encode(to encoder: any Encoder) throws {
        switch value {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .integer(let integer):
            var single = encoder.singleValueContainer()
            try single.encode(integer)
        case .text(let text):
            var single = encoder.singleValueContainer()
            try single.encode(text)
        case .real(let real):
            var tagged = encoder.container(keyedBy: Tag.self)
            if real.isFinite {
                try tagged.encode(real, forKey: .real)
            } else {
                try tagged.encode(real > 0 ? "inf" : "-inf", forKey: .real)
            }
        case .blob(let data):
            var tagged = encoder.container(keyedBy: Tag.self)
            try tagged.encode(data.base64EncodedString(), forKey: .blob)
        }
    }
}

extension DecodingError {
    /// A short, readable account of where a message failed to decode.
    var syncDescription: String {
        func path(_ context: Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
            return path.isEmpty ? "" : " at \(path)"
        }
        switch self {
        case let .typeMismatch(_, context), let .valueNotFound(_, context), let .dataCorrupted(context):
            return context.debugDescription + path(context)
        case let .keyNotFound(key, context):
            return "missing \"\(key.stringValue)\"" + path(context)
        @unknown default:
            return String(describing: self)
        }
    }
}
