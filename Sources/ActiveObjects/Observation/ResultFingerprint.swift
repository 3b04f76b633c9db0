import CSQLite

/// A running hash of every row a fetch stepped through (types and bytes of every column), so
/// that a live query can tell whether a re-fetch found something else than the last one — the
/// only way to know, after another process committed, whether the observed data changed.
///
/// Each row's ``RowHash``, folded in order (FNV-1a style, 64 bits): order-sensitive; a
/// collision only means one element not emitted for a change to data another process wrote
/// that hashes to the same value.
final class ResultFingerprint {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var rows = 0

    /// Hashes the current row of `statement` (every column: see ``RowHash``) into the value,
    /// in order.
    func add(row statement: OpaquePointer) {
        rows += 1
        let row = UInt64(UInt(bitPattern: RowHash.of(statement, 0..<sqlite3_column_count(statement))))
        value = (value ^ row) &* 0x0000_0100_0000_01b3
    }
}

/// A 64-bit hash of some columns of a statement's current row (their storage classes and
/// bytes), for telling whether a row changed since a live result last read it. Words of 8
/// bytes at a time, each mixed by a multiply and a shift: about 4× cheaper than `Hasher`,
/// which matters when another process's commit makes a live result hash its whole result.
enum RowHash {
    static func of(_ statement: OpaquePointer, _ columns: Range<Int32>) -> Int {
        var hash: UInt64 = 0x243F_6A88_85A3_08D3
        @inline(__always) func mix(_ word: UInt64) {
            hash = (hash ^ word) &* 0x9E37_79B9_7F4A_7C15
            hash ^= hash >> 29
        }
        for index in columns {
            let type = sqlite3_column_type(statement, index)
            switch type {
            case SQLITE_INTEGER:
                mix(UInt64(type))
                mix(UInt64(bitPattern: sqlite3_column_int64(statement, index)))
            case SQLITE_FLOAT:
                mix(UInt64(type))
                mix(sqlite3_column_double(statement, index).bitPattern)
            case SQLITE_TEXT, SQLITE_BLOB:
                let bytes = type == SQLITE_TEXT
                    ? UnsafeRawPointer(sqlite3_column_text(statement, index))
                    : sqlite3_column_blob(statement, index)
                let length = Int(sqlite3_column_bytes(statement, index))
                mix(UInt64(type) << 56 | UInt64(length))
                guard let bytes else { continue }
                var offset = 0
                while offset + 8 <= length {
                    mix(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    offset += 8
                }
                if offset < length {
                    var tail: UInt64 = 0
                    for byte in 0..<(length - offset) {
                        tail |= UInt64(bytes.load(fromByteOffset: offset + byte, as: UInt8.self)) << (8 * UInt64(byte))
                    }
                    mix(tail)
                }
            default:
                mix(UInt64(type))
            }
        }
        return Int(bitPattern: UInt(hash))
    }
}
