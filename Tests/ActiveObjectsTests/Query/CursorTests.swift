import Foundation
import Testing
@testable import ActiveObjects

/// each { } and cursors: streaming, early exit, statement reset, nesting.
@Suite struct CursorTests {
    typealias P = QueryPerson
    struct Stop: Error {}

    @Test func eachVisitsEveryMatchingRowInOrder() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople()
            var seen: [Int64] = []
            try P.where(\.$active == true).order(by: "id").each { seen.append($0.id ?? -1) }
            #expect(seen == rows.filter(\.active).map(\.id))
        }
    }

    @Test func aThrowingClosureStopsIterationAndTheStatementIsReset() throws {
        try withModelFileDB { db, path in
            let rows = try seedQueryPeople()
            var visited = 0
            #expect(throws: Stop.self) {
                try P.order(by: "id").each { _ in
                    visited += 1
                    if visited == 3 { throw Stop() }
                }
            }
            #expect(visited == 3, "iteration stopped at the throw")
            // The same query runs again from the start.
            var again: [Int64] = []
            try P.order(by: "id").each { again.append($0.id ?? -1) }
            #expect(again == rows.map(\.id))
            #expect(try P.countAll() == 50)

            // No read transaction is left open: a TRUNCATE checkpoint completes, from this
            // connection and from another one.
            let p = P(); p.name = "wal"; try p.save()
            #expect(throws: Stop.self) { try P.all.each { _ in throw Stop() } }
            let own = try db.rows("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try own[0][0] as Int == 0, "not busy: \(own)")
            let other = try Database(path: path)
            defer { try? other.close() }
            let second = try other.rows("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try second[0][0] as Int == 0, "not busy: \(second)")
            #expect(try second[0][1] as Int == 0, "the WAL was truncated: \(second)")
        }
    }

    @Test func aTypeMismatchMidwayAlsoResetsTheStatement() throws {
        try withModelFileDB { db, _ in
            try seedQueryPeople(count: 10)
            try db.execute("UPDATE query_person SET level = 300 WHERE id = 5")
            var visited = 0
            let error = expectActiveObjectError { try P.order(by: "id").each { _ in visited += 1 } }
            #expect(error?.typeMismatchFields?.rowID == 5)
            #expect(visited == 4)
            let checkpoint = try db.rows("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try checkpoint[0][0] as Int == 0)
        }
    }

    @Test func nestedIdenticalQueryInsideEachDoesNotRestartTheOuterLoop() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople(count: 20)
            let query = P.order(by: "id")
            var outer: [Int64] = []
            try query.each { person in
                outer.append(person.id ?? -1)
                #expect(try query.all().count == 20)
                var inner = 0
                try query.each { _ in inner += 1 }
                #expect(inner == 20)
                #expect(try query.first()?.id == rows[0].id)
            }
            #expect(outer == rows.map(\.id))
        }
    }

    @Test func cursorPullsUntilNil() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople(count: 30)
            let cursor = try P.where(\.$age >= 30).order(by: "id").cursor()
            var seen: [Int64] = []
            while let person = try cursor.next() {
                seen.append(person.id ?? -1)
                // Other queries, including the same one, work between pulls.
                _ = try P.where(\.$age >= 30).order(by: "id").count()
                let nested = try P.where(\.$age >= 30).order(by: "id").cursor()
                #expect(try nested.next()?.id == rows.first { $0.age >= 30 }?.id)
                nested.close()
            }
            #expect(seen == rows.filter { $0.age >= 30 }.map(\.id))
            #expect(try cursor.next() == nil, "stays exhausted")
            #expect(try P.where(\.$age > 1000).cursor().next() == nil)
        }
    }

    @Test func closingACursorEarlyReleasesItsReadTransaction() throws {
        try withModelFileDB { db, path in
            try seedQueryPeople(count: 10)
            let cursor = try P.order(by: "id").cursor()
            #expect(try cursor.next() != nil)
            cursor.close()
            cursor.close()
            #expect(try cursor.next() == nil)
            let other = try Database(path: path)
            defer { try? other.close() }
            let checkpoint = try other.rows("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try checkpoint[0][0] as Int == 0)
            _ = db
        }
    }

    @Test func cursorOfAClosedDatabaseThrowsDatabaseClosed() throws {
        try withModelDB { db in
            try seedQueryPeople(count: 5)
            let cursor = try P.all.cursor()
            #expect(try cursor.next() != nil)
            try db.close()
            let error = expectActiveObjectError { _ = try cursor.next() }
            if case .databaseClosed? = error {} else { Issue.record("expected databaseClosed, got \(String(describing: error))") }
        }
    }
}

/// A cursor keeps the reader leased for it, even a temporary extra reader that nothing else
/// owns (with the statement cache off, nothing else keeps such a connection alive).
@Suite struct CursorPlacementTests {
    @Test func cursorsOnATemporaryExtraReaderKeepIt() throws {
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.maximumReaderCount = 1
        options.statementCacheSize = 0
        let db = try Database(path: folder.path("temporary.sqlite"), options: options)
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            try RoutedNote.createTable()
            for body in ["a", "b", "c"] {
                let note = RoutedNote()
                note.body = body
                try note.save()
            }
            let first = try RoutedNote.all.order(by: \.$id).cursor()
            #expect(try first.next()?.body == "a")
            // The only reader is the first cursor's: this one gets a temporary extra reader.
            let second = try RoutedNote.all.order(by: \.$id).cursor()
            #expect(try second.next()?.body == "a")
            #expect(try second.next()?.body == "b")
            #expect(try first.next()?.body == "b")
            #expect(try second.next()?.body == "c")
            #expect(try second.next() == nil)
            #expect(try first.next()?.body == "c")
            first.close()
            #expect(db.readers?.openCount == 1, "the temporary reader was not closed when given back")
        }
    }

    /// Closing the database while cursors on other threads reach their end never deadlocks.
    @Test func closingWhileCursorsEndOnOtherThreadsDoesNotDeadlock() throws {
        for trial in 0..<30 {
            let folder = try TemporaryDirectory()
            let db = try Database(path: folder.path("close.sqlite"))
            try ModelTestDB.$current.withValue(db) {
                try RoutedNote.createTable()
                for body in ["a", "b"] {
                    let note = RoutedNote()
                    note.body = body
                    try note.save()
                }
                let held = try (0..<3).map { _ in try RoutedNote.all.cursor() }
                for cursor in held { _ = try cursor.next() }
                let stop = Locked(false)
                let threads = (0..<3).map { _ in
                    Thread {
                        ModelTestDB.$current.withValue(db) {
                            while !stop.current {
                                guard let cursor = try? RoutedNote.all.cursor() else { break }
                                while (try? cursor.next()) ?? nil != nil {}
                            }
                        }
                    }
                }
                threads.forEach { $0.start() }
                usleep(2_000)
                let closed = runOnAnotherThread(timeout: 10) { try db.close() }
                stop.withLock { $0 = true }
                #expect(closed != nil, "trial \(trial): close() did not return within 10 s")
                withExtendedLifetime(held) {}
            }
        }
    }
}
