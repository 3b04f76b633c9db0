/// How the statement cache finds a statement: by SQL text, or by the identity of a
/// ``SharedSQL`` (no string hashing on the hot paths of models).
enum StatementKey: Hashable {
    case text(String)
    case shared(ObjectIdentifier)
}

/// Something that can be compiled into a statement: SQL text, or a ``SharedSQL``.
protocol StatementSource {
    var sql: String { get }
    var cacheKey: StatementKey { get }
    /// The object whose identity the key is made of (kept alive by the cache), if any.
    var keyOwner: AnyObject? { get }
}

extension String: StatementSource {
    var sql: String { self }
    var cacheKey: StatementKey { .text(self) }
    var keyOwner: AnyObject? { nil }
}

/// SQL text built once and kept for the life of the program (a model's INSERT, find by id…),
/// cached by the identity of this object rather than by hashing its text on every call.
final class SharedSQL: StatementSource, Sendable {
    let sql: String
    init(_ sql: String) { self.sql = sql }
    var cacheKey: StatementKey { .shared(ObjectIdentifier(self)) }
    var keyOwner: AnyObject? { self }
}

/// A bounded, least-recently-used cache of one connection's prepared statements.
///
/// Not thread-safe: it belongs to one ``Connection``, used by one thread at a time.
struct StatementCache {
    private final class Entry {
        let statement: Statement
        @exclusivity(unchecked) var lastUse: UInt64
        /// The ``SharedSQL`` whose identity is the key: kept alive with the entry, so that its
        /// address can never be reused by other SQL while the entry exists.
        let keyOwner: AnyObject?
        init(_ statement: Statement, lastUse: UInt64, keyOwner: AnyObject?) {
            (self.statement, self.lastUse, self.keyOwner) = (statement, lastUse, keyOwner)
        }
    }

    let capacity: Int
    private var entries: [StatementKey: Entry] = [:]
    private var clock: UInt64 = 0

    init(capacity: Int) { self.capacity = capacity }

    /// The cached statement for `key`, marked as just used.
    mutating func statement(for key: StatementKey) -> Statement? {
        clock &+= 1
        guard let entry = entries[key] else { return nil }
        entry.lastUse = clock
        return entry.statement
    }

    /// Keeps `statement` under `key`, evicting the least recently used one when full. The
    /// evicted statement is finalized when its last user releases it.
    mutating func insert(_ statement: Statement, for key: StatementKey, keyOwner: AnyObject?) {
        guard capacity > 0 else { return }
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            entries[oldest] = nil
        }
        entries[key] = Entry(statement, lastUse: clock, keyOwner: keyOwner)
    }

    /// Finalizes and forgets every statement.
    mutating func finalizeAll() {
        for entry in entries.values { entry.statement.finalize() }
        entries.removeAll()
    }
}
