// What every contender implements, and the data they all work on.

/// One library under test, with its own on-disk WAL database holding the tables `item` and
/// `Orders`.
///
/// Each method returns a checksum of what it read or wrote (the same for every contender on
/// the same data), which the runner compares, so that no contender can skip work.
protocol Contender: AnyObject {
    /// The name printed in `BENCH` lines.
    var name: String { get }
    /// Executes SQL outside the timed sections (resets between rounds).
    func execute(_ sql: String) throws
    /// Creates one object per seed, saves each (one INSERT) inside one transaction; sums the ids.
    func insert(_ seeds: [ItemSeed]) throws -> Int
    /// Inserts one object per seed with the library's batch insert, in one transaction; sums
    /// the ids. Libraries without one (hand-written C, GRDB) insert one prepared statement at a
    /// time, as in ``insert(_:)``: the yardstick the batch insert is measured against.
    func insertAll(_ seeds: [ItemSeed]) throws -> Int
    /// Fetches every row as an object, into an array.
    func fetchAll() throws -> Int
    /// Looks up each id with the library's primary-key finder.
    func find(ids: [Int64]) throws -> Int
    /// Streams every row as an object through a closure.
    func each() throws -> Int
    /// Streams every row as an object by pulling from a cursor.
    func cursor() throws -> Int
    /// Fetches every row of `Orders` as objects whose dates are `Date?` and freight `Decimal?`
    /// (the model `activeobjects-gen` writes for the table).
    func fetchOrders() throws -> Int
    /// Fetches every row of `Orders` as objects whose dates are `String?` and freight `Double?`.
    func fetchOrdersAsText() throws -> Int
    /// Every row of `Orders` as field texts (untimed: to check that all contenders read the same).
    func orderFields(text: Bool) throws -> [[String]]
    /// Releases the database.
    func close() throws
}

extension Contender {
    /// No batch insert: one prepared statement at a time.
    func insertAll(_ seeds: [ItemSeed]) throws -> Int { try insert(seeds) }
}

/// The values of one row, generated once (outside the timed sections) from a seeded RNG.
struct ItemSeed: Sendable {
    var intA: Int
    var intB: Int
    var intC: Int
    var realA: Double
    var realB: Double
    var textA: String
    var textB: String
    var textC: String
    var note: String?
    var active: Bool

    /// A row of the shape the issue asks for: 3 INTEGER, 2 REAL, 3 TEXT of 10–30 chars,
    /// 1 nullable TEXT (NULL half the time), 1 Bool.
    static func make(using rng: inout SplitMix64) -> ItemSeed {
        ItemSeed(
            intA: Int(rng.next() % 1_000_000),
            intB: Int(truncatingIfNeeded: rng.next()) >> 8,
            intC: Int(rng.next() % 100),
            realA: Double(rng.next() % 1_000_000) / 7.0,
            realB: Double(rng.next() % 1_000) / 3.0,
            textA: randomText(using: &rng),
            textB: randomText(using: &rng),
            textC: randomText(using: &rng),
            note: rng.next() % 2 == 0 ? nil : randomText(using: &rng),
            active: rng.next() % 2 == 0)
    }

    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)

    private static func randomText(using rng: inout SplitMix64) -> String {
        let length = 10 + Int(rng.next() % 21)   // 10…30
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        for _ in 0..<length { bytes.append(alphabet[Int(rng.next() % UInt64(alphabet.count))]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The checksum every contender computes per object it read or wrote: cheap (no string
/// traversal: `utf8.count` of a native string is O(1)) but touching every kind of column.
@inline(__always)
func rowChecksum(id: Int64, intA: Int, realA: Double, textA: String, note: String?, active: Bool) -> Int {
    Int(id) &+ intA &+ Int(realA) &+ textA.utf8.count &+ (note == nil ? 0 : 1) &+ (active ? 1 : 0)
}

/// SplitMix64: small, fast, seedable; the same sequence on every platform.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The one schema, created identically in every contender's database (not by any of the
/// libraries, so that constraints and affinities are the same for all).
let createItemTableSQL = """
    CREATE TABLE IF NOT EXISTS item (
        id INTEGER PRIMARY KEY,
        intA INTEGER NOT NULL,
        intB INTEGER NOT NULL,
        intC INTEGER NOT NULL,
        realA REAL NOT NULL,
        realB REAL NOT NULL,
        textA TEXT NOT NULL,
        textB TEXT NOT NULL,
        textC TEXT NOT NULL,
        note TEXT,
        active INTEGER NOT NULL
    )
    """

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
