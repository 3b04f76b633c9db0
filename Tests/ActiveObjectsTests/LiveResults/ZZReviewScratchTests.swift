import Foundation
import Testing
@testable import ActiveObjects

final class ReviewChild: ActiveObject {
    override class var database: Database? { liveResultsDatabase.withLock { $0 } }
    @Column var name = ""
    @Column var ownerId: Int64? = nil
}

extension LiveChangesTests {
    @Test func scratchTriggerWithWhereAndValues() async throws {
        try await withLiveResultsDB { db, _ in
            try ReviewEntry.createTable()
            try await db.execute("CREATE TRIGGER review_wipe AFTER INSERT ON live_tag BEGIN DELETE FROM review_entry WHERE rank > 1; END")
            for (name, rank) in [("a", 1), ("b", 2), ("c", 3)] {
                let entry = ReviewEntry(); entry.name = name; entry.rank = rank; try await entry.save()
            }
            let results = ReviewEntry.all.order(by: \.$rank).liveResults()
            #expect(await eventually(timeout: 3) { results.isLoaded && results.elements.count == 3 }, "\(String(describing: results.error)) \(results.elements.count)")
            for round in 0..<2 {
                try await db.execute("UPDATE review_entry SET name = ? WHERE rank = 1", ["a\(round)"])
                #expect(await eventually(timeout: 3) { results.elements.first?.name == "a\(round)" })
            }
            try await db.execute("INSERT INTO live_tag (label) VALUES ('wipe')")
            #expect(await eventually(timeout: 3) { results.elements.count == 1 }, "with WHERE")
            results.cancel()
        }
    }

    @Test func scratchTruncateTriggerValues() async throws {
        try await withLiveResultsDB { db, _ in
            try ReviewEntry.createTable()
            try await db.execute("CREATE TRIGGER review_wipe AFTER INSERT ON live_tag BEGIN DELETE FROM review_entry; END")
            for (name, rank) in [("a", 1), ("b", 2), ("c", 3)] {
                let entry = ReviewEntry(); entry.name = name; entry.rank = rank; try await entry.save()
            }
            let probe = LiveProbe(ReviewEntry.all.values()) { $0.count }
            _ = probe
            var it = ReviewEntry.all.values().makeAsyncIterator()
            #expect(try await it.next()?.count == 3)
            try await db.execute("INSERT INTO live_tag (label) VALUES ('wipe')")
            #expect(try await it.next()?.count == 0)
        }
    }

    @Test func scratchCascades() async throws {
        try await withLiveResultsDB { db, _ in
            try await db.execute("CREATE TABLE review_owner (id INTEGER PRIMARY KEY, name TEXT)")
            try await db.execute("CREATE TABLE review_child (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', ownerId INTEGER REFERENCES review_owner(id) ON DELETE CASCADE ON UPDATE SET NULL)")
            try await db.execute("INSERT INTO review_owner (id, name) VALUES (1, 'o1'), (2, 'o2')")
            try await db.execute("INSERT INTO review_child (name, ownerId) VALUES ('c1', 1), ('c2', 1), ('c3', 2)")
            let query = ReviewChild.where("ownerId IS NOT NULL").order(by: \.$name)
            let results = query.liveResults()
            #expect(await eventually(timeout: 3) { results.isLoaded && results.elements.count == 3 }, "\(String(describing: results.error)) \(results.elements.count)")
            for round in 0..<2 {
                try await db.execute("UPDATE review_child SET name = ? WHERE ownerId = 2", ["c3\(round)"])
                #expect(await eventually(timeout: 3) { results.elements.last?.name == "c3\(round)" })
            }
            try await db.execute("DELETE FROM review_owner WHERE id = 1")
            #expect(await eventually(timeout: 3) { results.elements.count == 1 }, "cascade delete: \(results.elements.map(\.name))")
            try await db.execute("UPDATE review_owner SET id = 5 WHERE id = 2")
            #expect(await eventually(timeout: 3) { results.elements.isEmpty }, "set null: \(results.elements.map(\.name))")
            results.cancel()
        }
    }

    @Test func scratchSavepointsAndAlter() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            try addItem("b", score: 2)
            let query = LiveItem.where(\.$shown == true).order(by: \.$score)
            let results = query.liveResults()
            #expect(await eventually { results.isLoaded })
            try await warmUp(results, query, db: db)
            try await db.transaction {
                try db.execute("UPDATE live_item SET memo = 'kept' WHERE name = 'a'")
                try db.execute("SAVEPOINT s1")
                try db.execute("UPDATE live_item SET memo = 'undone' WHERE name = 'b'")
                try db.execute("DELETE FROM live_item")
                try db.execute("ROLLBACK TO s1")
                try db.execute("RELEASE s1")
                try db.execute("UPDATE live_item SET score = 7 WHERE name = 'a'")
            }
            var (live, fresh) = try await settle(results, query)
            #expect(live == fresh)
            try await db.execute("ALTER TABLE live_item ADD COLUMN extra INTEGER DEFAULT 3")
            try await db.execute("UPDATE live_item SET memo = 'after alter', extra = 4 WHERE name = 'b'")
            (live, fresh) = try await settle(results, query)
            #expect(live == fresh)
            try await db.execute("INSERT INTO live_item (name, score, shown, memo) VALUES ('c', 0, 1, '')")
            (live, fresh) = try await settle(results, query)
            #expect(live == fresh)
            results.cancel()
        }
    }

    @Test func scratchHookCost() async throws {
        try await withLiveResultsDB { db, _ in
            func bulk(_ label: String) async throws -> Double {
                var best = Double.infinity
                for _ in 0..<5 {
                    let start = DispatchTime.now().uptimeNanoseconds
                    try await db.transaction {
                        for i in 0..<20_000 { try db.execute("INSERT INTO live_tag (label) VALUES (?)", ["t\(i)"]) }
                    }
                    best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                }
                print("REVIEW \(label): best of 5, 20k inserts in one transaction: \(best) ms")
                return best
            }
            func single(_ label: String) throws {
                var best = Double.infinity
                for _ in 0..<5 {
                    let start = DispatchTime.now().uptimeNanoseconds
                    for i in 0..<500 { try db.execute("INSERT INTO live_tag (label) VALUES (?)", ["s\(i)"]) }
                    best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                }
                print("REVIEW \(label): best of 5, 500 autocommit inserts: \(best) ms")
            }
            _ = try await bulk("none (warm)")
            _ = try await bulk("none")
            try single("none")
            let results = LiveItem.all.liveResults()      // another table
            #expect(await eventually { results.isLoaded })
            try addItem("x", score: 1)   // installs the hook
            _ = try await bulk("live result on another table (hook)")
            try single("live result on another table (hook)")
            let values = LiveItem.all.values()
            var it = values.makeAsyncIterator()
            _ = try await it.next()
            results.cancel()
            #expect(await eventually { db.observations.count == 1 })
            try addItem("y", score: 1)   // removes the hook
            _ = try await bulk("values() on another table (no hook)")
            try single("values() on another table (no hook)")
        }
    }
}

import Observation

extension LiveChangesTests {
    @Test func scratchNumberedParameter() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            try addItem("b", score: 2)
            let query = LiveItem.where("score >= ?1", 2).order(by: \.$score)
            #expect(try await query.all().map(\.name) == ["b"])
            let results = query.liveResults()
            #expect(await eventually { results.isLoaded })
            for round in 0..<3 {
                try await db.execute("UPDATE live_item SET memo = ? WHERE name = 'b'", ["r\(round)"])
                _ = await eventually(timeout: 2) { results.elements.first?.memo == "r\(round)" || results.error != nil }
            }
            #expect(results.error == nil, "\(String(describing: results.error))")
            results.cancel()
        }
    }

    @Test func scratchIncludingUpdatedListsOnlyChanged() async throws {
        try await withLiveResultsDB { db, _ in
            let tag = LiveTag(); tag.label = "red"; try await tag.save()
            let t = tag
            try addItem("a", score: 1, tag: t)
            try addItem("b", score: 2, tag: t)
            var changes = LiveItem.all.order(by: \.$score).including(\.tag).changes().makeAsyncIterator()
            let first = try #require(try await changes.next(isolation: #isolation))
            try await db.execute("UPDATE live_item SET memo = 'x' WHERE name = 'a'")
            let second = try #require(try await changes.next(isolation: #isolation))
            print("REVIEW including updated after one own-table row change: \(second.updated.map(\.name))")
            #expect(second.updated.count == 1, "updated lists every object although no related row changed")
            _ = first
        }
    }

    @Test @MainActor func scratchRelationChangeIsObservable() async throws {
        try await withLiveResultsDB { db, _ in
            let tag = LiveTag(); tag.label = "red"; try await tag.save()
            let t = tag
            try addItem("a", score: 1, tag: t)
            let results = LiveItem.all.including(\.tag).liveResults()
            #expect(await eventually { results.isLoaded })
            let item = try #require(results.elements.first)
            let told = LockedBox(0)
            withObservationTracking { _ = results.elements; _ = try? tagLabel(of: item); _ = item.name } onChange: { told.set(told.value + 1) }
            try await db.execute("UPDATE live_tag SET label = 'blue'")
            #expect(await eventually(timeout: 3) { (try? tagLabel(of: item)) == "blue" })
            print("REVIEW observers told of relation change: \(told.value)")
            #expect(told.value > 0, "nothing told a view that the relation it shows changed")
            results.cancel()
        }
    }

    @Test @MainActor func scratchElementsNotifiedOnInPlaceUpdate() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            let results = LiveItem.all.liveResults()
            #expect(await eventually { results.isLoaded })
            let told = LockedBox(0)
            withObservationTracking { _ = results.elements } onChange: { told.set(told.value + 1) }
            try await db.execute("UPDATE live_item SET name = 'b'")
            #expect(await eventually(timeout: 3) { results.elements.first?.name == "b" })
            print("REVIEW elements observers told on in-place update: \(told.value)")
            results.cancel()
        }
    }

    @Test func scratchTempTriggerReplace() async throws {
        try await withLiveResultsDB { db, _ in
            try ReviewEntry.createTable()
            try await db.execute("CREATE UNIQUE INDEX review_entry_name ON review_entry(name)")
            for (name, rank) in [("a", 1), ("b", 2), ("c", 3)] {
                let entry = ReviewEntry(); entry.name = name; entry.rank = rank; try await entry.save()
            }
            try await db.execute("CREATE TEMP TRIGGER review_rep AFTER INSERT ON live_tag BEGIN UPDATE OR REPLACE review_entry SET name = 'a' WHERE name = 'b'; END")
            let query = ReviewEntry.all.order(by: \.$rank)
            let results = query.liveResults()
            #expect(await eventually { results.isLoaded && results.elements.count == 3 })
            for round in 0..<2 {
                try await db.execute("UPDATE review_entry SET name = ? WHERE rank = 3", ["c\(round)"])
                #expect(await eventually(timeout: 3) { results.elements.last?.name == "c\(round)" })
            }
            try await db.execute("INSERT INTO live_tag (label) VALUES ('x')")
            let fresh = try await query.all().map(\.name)
            #expect(await eventually(timeout: 3) { results.elements.map(\.name) == fresh }, "\(results.elements.map(\.name)) vs \(fresh)")
            results.cancel()
        }
    }
}
