import Dispatch
import Foundation
import Testing
@testable import ActiveObjects

/// The database the load test's model uses.
private let loadDatabase = Locked<Database?>(nil)

final class RelLoadItem: ActiveObject {
    override class var database: Database? { loadDatabase.withLock { $0 } }
    @Column var thread: Int = 0
    @Column var seq: Int = 0
    @Column var value: Int = 0
    @Column var label: String = ""
}

/// 8 threads × 1,000 mixed model operations on one `Database`: saves, updates, finds, counts,
/// queries, deletes, and transactions with nested savepoints that sometimes roll back on
/// purpose. Each thread owns its rows and tracks what it committed; at the end the table must
/// be exactly the union of those expectations. (Name contains "Concurrency": CI runs it under
/// Thread Sanitizer.)
@Suite("Concurrency under load", .serialized)
struct ConcurrencyLoadTests {
    struct Expected: Equatable {
        var value: Int
        var label: String
    }

    struct Rollback: Error {}

    @Test func eightThreadsOfMixedModelOperationsLoseAndDuplicateNothing() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("load.sqlite"))
        loadDatabase.withLock { $0 = db }
        defer { loadDatabase.withLock { $0 = nil } }
        // This test is about locking, not durability: skip the fsync of every commit.
        try db.execute("PRAGMA synchronous = NORMAL")
        try RelLoadItem.createTable()
        try db.execute("CREATE UNIQUE INDEX rel_load_item_thread_seq ON rel_load_item(thread, seq)")

        let threads = 8, operationsPerThread = 1_000
        let seed: UInt64 = 0x10AD
        let errors = Locked<[String]>([])
        let results = Locked<[Int: [Int64: Expected]]>([:])
        let tally = Locked<[String: Int]>([:])
        let clock = ContinuousClock()
        let start = clock.now

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var random = SeededGenerator(seed: seed &+ UInt64(thread))
            var mine: [Int64: Expected] = [:]
            var nextSeq = 0
            var counts: [String: Int] = [:]
            func fail(_ message: String) { errors.withLock { $0.append("thread \(thread): \(message)") } }

            func newItem() -> RelLoadItem {
                let item = RelLoadItem()
                item.thread = thread
                item.seq = nextSeq
                nextSeq += 1
                item.value = Int.random(in: 0..<1_000, using: &random)
                item.label = "t\(thread)-\(item.seq)"
                return item
            }
            func check(_ item: RelLoadItem?, _ id: Int64, in state: [Int64: Expected], _ what: String) {
                guard let item else { return fail("\(what): row \(id) missing") }
                let seen = Expected(value: item.value, label: item.label)
                if state[id] != seen || item.thread != thread { fail("\(what): row \(id) is \(seen), expected \(String(describing: state[id]))") }
            }

            for step in 0..<operationsPerThread {
                let roll = Int.random(in: 0..<100, using: &random)
                do {
                    switch roll {
                    case 0..<25:   // save a new object
                        let item = newItem()
                        try item.save()
                        guard let id = item.id else { fail("step \(step): no id"); continue }
                        if mine[id] != nil { fail("step \(step): id \(id) given twice") }
                        mine[id] = Expected(value: item.value, label: item.label)
                        counts["insert", default: 0] += 1
                    case 25..<42:  // update one of my rows
                        guard let id = mine.keys.randomElement(using: &random) else { continue }
                        let item = try RelLoadItem.find(id: id)
                        check(item, id, in: mine, "update")
                        guard let item else { continue }
                        item.value = Int.random(in: 0..<1_000, using: &random)
                        if Bool.random(using: &random) { item.label += "+" }
                        try item.save()
                        mine[id] = Expected(value: item.value, label: item.label)
                        counts["update", default: 0] += 1
                    case 42..<55:  // find by id
                        guard let id = mine.keys.randomElement(using: &random) else { continue }
                        check(try RelLoadItem.find(id: id), id, in: mine, "find")
                        counts["find", default: 0] += 1
                    case 55..<63:  // counts
                        let n = try RelLoadItem.count(where: ["thread": thread])
                        if n != mine.count { fail("step \(step): count \(n), expected \(mine.count)") }
                        _ = try RelLoadItem.countAll()
                        counts["count", default: 0] += 1
                    case 63..<73:  // a query: filter, order, limit, pluck
                        let threshold = Int.random(in: 0..<1_000, using: &random)
                        let rows = try RelLoadItem.where(\.$thread == thread && \.$value >= threshold)
                            .order(by: \.$value).order(by: \.$seq).all()
                        let expectedIDs = Set(mine.filter { $0.value.value >= threshold }.keys)
                        if Set(rows.compactMap(\.id)) != expectedIDs || rows.count != expectedIDs.count {
                            fail("step \(step): query returned \(rows.count) rows, expected \(expectedIDs.count)")
                        }
                        if rows.map(\.value) != rows.map(\.value).sorted() { fail("step \(step): query out of order") }
                        let labels = try RelLoadItem.where(["thread": thread]).limit(5).pluck(\.$label)
                        if labels.count != Swift.min(5, mine.count) { fail("step \(step): pluck gave \(labels.count)") }
                        counts["query", default: 0] += 1
                    case 73..<78:  // delete one of my rows
                        guard let id = mine.keys.randomElement(using: &random) else { continue }
                        let item = try RelLoadItem.find(id: id)
                        check(item, id, in: mine, "delete")
                        if try item?.delete() != true { fail("step \(step): delete of \(id) deleted nothing") }
                        mine[id] = nil
                        counts["delete", default: 0] += 1
                    default:       // a transaction with nested savepoints, some rolled back on purpose
                        var pending = mine
                        let rollBackOuter = Int.random(in: 0..<5, using: &random) == 0
                        let rollBackInner = Int.random(in: 0..<3, using: &random) == 0
                        let inserted = (0..<Int.random(in: 1...3, using: &random)).map { _ in newItem() }
                        let innerItem = newItem()
                        let updateID = mine.keys.randomElement(using: &random)
                        let newValue = Int.random(in: 0..<1_000, using: &random)
                        do {
                            try db.transaction {
                                for item in inserted {
                                    try item.save()
                                    pending[item.id!] = Expected(value: item.value, label: item.label)
                                }
                                if let updateID, let item = try RelLoadItem.find(id: updateID) {
                                    item.value = newValue
                                    try item.save()
                                    pending[updateID]?.value = newValue
                                }
                                do {
                                    try db.transaction {
                                        try innerItem.save()
                                        if try RelLoadItem.count(where: ["thread": thread]) != pending.count + 1 {
                                            fail("step \(step): count inside the savepoint is wrong")
                                        }
                                        if rollBackInner { throw Rollback() }
                                    }
                                    pending[innerItem.id!] = Expected(value: innerItem.value, label: innerItem.label)
                                } catch is Rollback {
                                    if innerItem.id != nil { fail("step \(step): rolled-back savepoint left an id") }
                                    counts["savepoint rollback", default: 0] += 1
                                }
                                if rollBackOuter { throw Rollback() }
                            }
                            mine = pending
                            counts["transaction commit", default: 0] += 1
                        } catch is Rollback {
                            if inserted.contains(where: { $0.id != nil }) { fail("step \(step): rolled-back insert kept its id") }
                            counts["transaction rollback", default: 0] += 1
                        }
                    }
                } catch {
                    fail("step \(step): \(error)")
                }
            }
            let final = mine, finalCounts = counts
            results.withLock { $0[thread] = final }
            tally.withLock { total in for (key, n) in finalCounts { total[key, default: 0] += n } }
        }
        let elapsed = clock.now - start

        #expect(errors.current.isEmpty, "\(errors.current.count) errors, e.g. \(errors.current.prefix(5))")
        // The table is exactly what the threads committed: nothing lost, duplicated or left
        // over from a rollback.
        let expected = results.current
        #expect(expected.count == threads)
        var stored: [Int: [Int64: Expected]] = [:]
        for item in try RelLoadItem.findAll() {
            guard let id = item.id else { continue }
            if stored[item.thread]?[id] != nil { Issue.record("row \(id) read twice") }
            stored[item.thread, default: [:]][id] = Expected(value: item.value, label: item.label)
        }
        for thread in 0..<threads {
            let want = expected[thread] ?? [:], have = stored[thread] ?? [:]
            #expect(have == want, "thread \(thread): \(have.count) rows stored, \(want.count) expected; missing \(Set(want.keys).subtracting(have.keys).sorted().prefix(5)), extra \(Set(have.keys).subtracting(want.keys).sorted().prefix(5))")
        }
        let rows = try RelLoadItem.countAll()
        #expect(rows == expected.values.reduce(0) { $0 + $1.count })
        #expect(try count(db, "SELECT count(*) FROM (SELECT thread, seq FROM rel_load_item GROUP BY thread, seq HAVING count(*) > 1)") == 0)
        let integrity: String? = try db.scalar("PRAGMA integrity_check")
        #expect(integrity == "ok")
        let breakdown = tally.current.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("RELIABILITY concurrency: \(threads) threads × \(operationsPerThread) operations, \(rows) rows, \(errors.current.count) errors, \(String(format: "%.2f", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)) s (\(breakdown); seed \(seed))")
    }
}
