import ActiveObjects
import CSQLiteBench
import GRDB

// Issue 11 item 4: peak memory of updating every row of the 1,000,000-row table streamed
// through `each` inside ONE transaction (each row: loaded, one column changed, saved), in a
// fresh child process per contender, like the memory walks:
//
// - raw-C: one SELECT stepped over the table and one prepared UPDATE per row, between BEGIN
//   IMMEDIATE and COMMIT;
// - ActiveObjects: `db.transaction { try Item.all.each { $0.intA += 1; try $0.save() } }`;
// - GRDB-hand: `queue.write { }` around a record cursor, `update(_:columns:)` per row.
//
// The checksum is the number of rows saved plus the sum of their ids (the same every time,
// although each run changes the values).

let memoryUpdateContenders = ["raw-C", "ActiveObjects", "GRDB-hand"]

/// The child side: one update walk, then `BENCH` and `PEAKRSS` lines.
func runMemoryUpdateChild(path: String, contenderName: String) throws {
    let baseline = peakResidentMiB() ?? 0
    let (milliseconds, checksum): (Double, Int)
    switch contenderName {
    case "raw-C": (milliseconds, checksum) = try measure { try rawUpdateAll(path: path) }
    case "ActiveObjects": (milliseconds, checksum) = try measure { try activeObjectsUpdateAll(path: path) }
    case "GRDB-hand": (milliseconds, checksum) = try measure { try grdbUpdateAll(path: path) }
    default: throw BenchError("memory-update: unknown contender \(contenderName)")
    }
    let result = MemoryResult(workload: "memory-update", contender: contenderName, milliseconds: milliseconds,
                              peakMiB: peakResidentMiB() ?? 0, baselineMiB: baseline)
    print("CHECKSUM memory-update \(contenderName) \(checksum)")
    print("BENCH memory-update \(contenderName) \(format(milliseconds, decimals: 3))")
    print(peakLine(result))
}

private func rawUpdateAll(path: String) throws -> Int {
    let connection = try RawConnection(path: path)
    defer { connection.close() }
    let select = try connection.prepare(RawContender.selectSQL)
    defer { sqlite3_finalize(select) }
    let update = try connection.prepare("UPDATE item SET intA = ? WHERE id = ?")
    defer { sqlite3_finalize(update) }
    var checksum = 0
    try connection.execute("BEGIN IMMEDIATE")
    while true {
        let code = sqlite3_step(select)
        if code == SQLITE_DONE { break }
        guard code == SQLITE_ROW else { throw connection.error("memory-update select") }
        let item = RawContender.read(select)
        item.intA += 1
        sqlite3_bind_int64(update, 1, Int64(item.intA))
        sqlite3_bind_int64(update, 2, item.id!)
        guard sqlite3_step(update) == SQLITE_DONE else { throw connection.error("memory-update update") }
        sqlite3_reset(update)
        checksum &+= 1 &+ Int(item.id!)
    }
    sqlite3_reset(select)
    try connection.execute("COMMIT")
    return checksum
}

private func activeObjectsUpdateAll(path: String) throws -> Int {
    let database = try ActiveObjects.Database(path: path)
    ActiveObject.defaultDatabase = database
    defer {
        ActiveObject.defaultDatabase = nil
        try? database.close()
    }
    var checksum = 0
    try database.transaction {
        try Item.all.each { item in
            item.intA += 1
            try item.save()
            checksum &+= 1 &+ Int(item.id!)
        }
    }
    return checksum
}

private func grdbUpdateAll(path: String) throws -> Int {
    var configuration = Configuration()
    configuration.journalMode = .wal
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    defer { try? queue.close() }
    return try queue.write { db in
        var checksum = 0
        let cursor = try HandItem.fetchCursor(db)
        while var record = try cursor.next() {
            record.intA += 1
            try record.update(db, columns: [Column("intA")])
            checksum &+= 1 &+ Int(record.id!)
        }
        return checksum
    }
}

/// Runs the update walk for each contender in a fresh child process, on the memory table.
func runMemoryUpdates(path: String, sizes: Sizes) throws -> [MemoryResult] {
    guard sizes.wants("memory-update") else { return [] }
    log("memory-update: \(sizes.memoryRows) rows loaded, changed and saved through each in one transaction, per contender")
    var results: [MemoryResult] = []
    var expected: Int?
    for name in memoryUpdateContenders where sizes.onlyContenders?.contains(name) ?? true {
        let output = try runChild(["memory-update-child", path, name])
        for line in output.split(separator: "\n") {
            if line.hasPrefix("CHECKSUM ") {
                let checksum = Int(line.split(separator: " ").last ?? "")
                if let expected, checksum != expected {
                    throw BenchError("memory-update: \(name) computed checksum \(checksum ?? -1), expected \(expected)")
                }
                expected = checksum
            } else if line.hasPrefix("BENCH ") || line.hasPrefix("PEAKRSS ") {
                print(line)
                if let result = parsePeakLine(String(line)) { results.append(result) }
            }
        }
    }
    return results
}
