import Foundation
import Testing
@testable import ActiveObjects

final class TextBindingNote: ModelTestRecord {
    @Column var title: String = ""
    @Column var body: String? = nil
    @Column var tag: String = ""
}

/// Texts are bound from each statement's own arena (`SQLITE_STATIC`), reused from one
/// execution to the next: every value must still reach the database exactly, whatever its
/// length, however many share one statement, and while other statements run in between.
@Suite("Text parameters (the statement's arena)")
struct TextBindingTests {
    /// Texts of every length class: empty, short (inline in Swift), around the arena's first
    /// block, across block boundaries, at and beyond the longest text the arena copies.
    static let lengths = [0, 1, 15, 16, 100, 511, 512, 513, 1_000, 4_095, 4_096, 4_097, 10_000, 70_000]

    static func text(_ length: Int, seed: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzé€😀 ")
        var result = ""
        var value = seed
        while result.utf8.count < length {
            value = value &* 6364136223846793005 &+ 1442695040888963407
            result.append(alphabet[Int(UInt64(bitPattern: Int64(value)) >> 33) % alphabet.count])
        }
        while result.utf8.count > length { result.removeLast() }
        return result
    }

    @Test func rawStatementsBindEveryLengthExactly() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, a TEXT, b TEXT)")
        var expected: [Int: (String, String)] = [:]
        // The same cached INSERT, executed again and again with texts of changing lengths.
        for (index, length) in Self.lengths.enumerated() {
            let a = Self.text(length, seed: index)
            let b = Self.text(Self.lengths[(index + 5) % Self.lengths.count], seed: index + 100)
            try db.execute("INSERT INTO t(k, a, b) VALUES (?, ?, ?)", [Int64(index), a, b])
            expected[index] = (a, b)
        }
        for row in try db.rows("SELECT k, a, b FROM t ORDER BY k") {
            let key: Int = try row[0]
            let a: String = try row[1]
            let b: String = try row[2]
            #expect(a == expected[key]?.0, "a of row \(key)")
            #expect(b == expected[key]?.1, "b of row \(key)")
            let type: String? = try db.scalar("SELECT typeof(a) FROM t WHERE k = ?", [Int64(key)])
            #expect(type == "text")
        }
        // A text parameter compared inside a query finds exactly its row.
        for (index, length) in Self.lengths.enumerated() {
            let a = Self.text(length, seed: index)
            let key: Int? = try db.scalar("SELECT k FROM t WHERE a = ? AND length(CAST(a AS BLOB)) = ?",
                                          [a, Int64(a.utf8.count)])
            #expect(key == index)
        }
    }

    @Test func aStatementSteppedAcrossOtherExecutionsKeepsItsParameters() throws {
        try withModelDB { db in
            try TextBindingNote.createTable()
            for index in 0..<40 {
                let note = TextBindingNote()
                note.title = "title \(index % 4)"
                note.tag = Self.text(index * 37 % 900, seed: index)
                try note.save()
            }
            // The outer query's text parameter is read on every step, while the loop body runs
            // other statements with texts of their own (and the same SQL: a second statement).
            var seen = 0
            try TextBindingNote.where(\.$title == "title 2").order(by: \.$id).each { note in
                seen += 1
                #expect(note.title == "title 2")
                let other = try TextBindingNote.where(\.$title == "title \(seen % 4)").count()
                #expect(other == 10)
                note.body = Self.text(2_000 + seen * 300, seed: seen)
                try note.save()
            }
            #expect(seen == 10)
            // The cursor form holds its statement between calls.
            let cursor = try TextBindingNote.where(\.$title == "title 1").order(by: \.$id).cursor()
            var fromCursor: [Int64] = []
            while let note = try cursor.next() {
                fromCursor.append(note.id!)
                _ = try TextBindingNote.where(\.$tag == Self.text(300, seed: Int(note.id!))).count()
            }
            #expect(fromCursor.count == 10)
            let bodies = try TextBindingNote.where(\.$title == "title 2").order(by: \.$id).pluck(\.$body)
            let expectedBodies: [String?] = (1...10).map { Self.text(2_000 + $0 * 300, seed: $0) }
            #expect(bodies == expectedBodies)
        }
    }

    @Test func insertAllBindsManyTextsAcrossChunksExactly() throws {
        try withModelDB { db in
            try TextBindingNote.createTable()
            // 450 objects: three chunks, hundreds of texts per statement, some beyond 4 KiB.
            let notes = (0..<450).map { index -> TextBindingNote in
                let note = TextBindingNote()
                note.title = Self.text(index % 40, seed: index)
                note.body = index % 3 == 0 ? nil : Self.text(Self.lengths[index % Self.lengths.count], seed: index + 7)
                note.tag = "tag \(index)"
                return note
            }
            try TextBindingNote.insertAll(notes)
            let stored = try TextBindingNote.all.order(by: \.$id).all()
            #expect(stored.count == notes.count)
            for (note, row) in zip(notes, stored) {
                #expect(row.id == note.id)
                #expect(row.title == note.title && row.body == note.body && row.tag == note.tag, "row \(row.id ?? -1)")
            }
            // Again, into the same cached statements, with other texts.
            let more = (0..<450).map { index -> TextBindingNote in
                let note = TextBindingNote()
                note.title = "second \(index)"
                note.tag = Self.text(600 + index, seed: -index)
                return note
            }
            try TextBindingNote.insertAll(more)
            let lastOfFirst = try #require(notes.last?.id)
            let tags = try TextBindingNote.where(\.$id > lastOfFirst).order(by: \.$id).pluck(\.$tag)
            #expect(tags.count == more.count)
            #expect(tags == more.map(\.tag), "the second batch's tags differ")
            let count: Int? = try db.scalar("SELECT count(*) FROM text_binding_note")
            #expect(count == 900)
        }
    }

    @Test func aStatementRepreparedAfterASchemaChangeStillHasItsTexts() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("reprepare.sqlite")
        let db = try Database(path: path)
        defer { try? db.close() }
        let other = try Database(path: path)
        defer { try? other.close() }
        try db.execute("CREATE TABLE t(a TEXT)")
        try db.execute("INSERT INTO t(a) VALUES (?)", [Self.text(700, seed: 1)])
        // Another connection changes the schema: the cached statement is reprepared by SQLite
        // on its next step, and its bindings carried over.
        try other.execute("CREATE TABLE unrelated(x)")
        try db.execute("INSERT INTO t(a) VALUES (?)", [Self.text(900, seed: 2)])
        let values: [String] = try db.rows("SELECT a FROM t ORDER BY rowid").map { try $0[0] }
        #expect(values == [Self.text(700, seed: 1), Self.text(900, seed: 2)])
    }

    @Test func aStatementThatNeededSeveralArenaBlocksStillBindsExactly() throws {
        try withModelDB { db in
            try TextBindingNote.createTable()
            // 200 rows × 3 texts of about 3 KiB: a chunk far beyond one arena block.
            let big = (0..<200).map { index -> TextBindingNote in
                let note = TextBindingNote()
                note.title = TextBindingTests.text(3_000, seed: index)
                note.body = TextBindingTests.text(3_100, seed: -index)
                note.tag = TextBindingTests.text(2_900, seed: index * 7)
                return note
            }
            try TextBindingNote.insertAll(big)
            // The same statement again (its arena merged to one block), with other texts.
            let small = (0..<200).map { index -> TextBindingNote in
                let note = TextBindingNote()
                note.title = "t\(index)"
                note.tag = TextBindingTests.text(index, seed: index)
                return note
            }
            try TextBindingNote.insertAll(small)
            let stored = try TextBindingNote.all.order(by: \.$id).all()
            #expect(stored.count == 400)
            let expected = big + small
            let mismatches = zip(stored, expected).filter { $0.title != $1.title || $0.body != $1.body || $0.tag != $1.tag }
            #expect(mismatches.isEmpty, "\(mismatches.count) rows differ")
            let bytes: Int? = try db.scalar("SELECT sum(length(CAST(title AS BLOB))) FROM text_binding_note")
            #expect(bytes == expected.reduce(0) { $0 + $1.title.utf8.count })
        }
    }
}
