import CSQLite

/// A running hash of every row a fetch stepped through (types and bytes of every column), so
/// that a live query can tell whether a re-fetch found something else than the last one — the
/// only way to know, after another process committed, whether the observed data changed.
///
/// FNV-1a, 64 bits: fast, order-sensitive; a collision only means one element not emitted
/// for a change to data another process wrote that hashes to the same value.
final class ResultFingerprint {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var rows = 0

    @inline(__always)
    private func mix(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    private func mix(_ word: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    /// Hashes the current row of `statement`.
    func add(row statement: OpaquePointer) {
        rows += 1
        let count = sqlite3_column_count(statement)
        mix(UInt64(count))
        for index in 0..<count {
            let type = sqlite3_column_type(statement, index)
            mix(UInt8(truncatingIfNeeded: type))
            switch type {
            case SQLITE_INTEGER:
                mix(UInt64(bitPattern: sqlite3_column_int64(statement, index)))
            case SQLITE_FLOAT:
                mix(sqlite3_column_double(statement, index).bitPattern)
            case SQLITE_TEXT, SQLITE_BLOB:
                let bytes = type == SQLITE_TEXT
                    ? UnsafeRawPointer(sqlite3_column_text(statement, index))
                    : sqlite3_column_blob(statement, index)
                let length = Int(sqlite3_column_bytes(statement, index))
                mix(UInt64(length))
                if let bytes {
                    for offset in 0..<length { mix(bytes.load(fromByteOffset: offset, as: UInt8.self)) }
                }
            default:
                break
            }
        }
    }
}
