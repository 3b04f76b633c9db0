import Foundation
import Testing
@testable import ActiveObjects

final class StateNote: ModelTestRecord {
    @Column var title = ""
    @Column var rank = 0
    var saves = 0
    var loads = 0
    override func didSave() { saves += 1 }
    override func didLoad() { loads += 1 }
}

/// A single-case enum occupies no memory.
enum OnlyKind: String, ColumnValue, Sendable {
    case note
}

final class EmptyKindNote: ModelTestRecord {
    @Column var kind: OnlyKind = .note
    @Column var title = ""
}

/// Issue 11 items 3–5: `save()` is one decision on an explicit record state; the rollback log
/// keeps no object alive; `update()` without changes still calls `didSave()`.
@Suite struct RecordStateTests {
    @Test func theStateFollowsTheObjectsLife() throws {
        try withModelDB { _ in
            try StateNote.createTable()
            let note = StateNote()
            #expect(note.recordState == .new)
            try note.save()
            #expect(note.recordState == .persisted && note.persistedRowID == note.id)
            try note.delete()
            #expect(note.recordState == .deleted)
            try note.save()                      // the whole row comes back, same id
            #expect(note.recordState == .persisted && note.id == 1)
            let loaded = try #require(try StateNote.find(id: 1))
            #expect(loaded.recordState == .persisted)
            let raw = try StateNote.fetch(sql: "SELECT title, rank FROM state_note")
            #expect(raw.first?.recordState == .keyless)
        }
    }

    /// Changing `id` on a loaded object then saving used to write a partial UPDATE into the
    /// other row; now the object stands for the row with the new id: all its columns go there,
    /// and the row it was loaded from is untouched.
    @Test func anIDChangedOnALoadedObjectWritesTheWholeRowAtTheNewID() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try StateNote.createTable()
            for (title, rank) in [("one", 1), ("two", 2)] {
                let note = StateNote()
                note.title = title
                note.rank = rank
                try note.save()
            }
            let first = try #require(try StateNote.find(id: 1))
            first.id = 2
            first.rank = 10                       // the only column "changed" since the load
            let (_, sql) = try recorder.recording { try first.save() }
            #expect(sql.contains { $0.contains("ON CONFLICT(\"id\") DO UPDATE") }, "\(sql)")
            let two = try #require(try StateNote.find(id: 2))
            #expect(two.title == "one" && two.rank == 10)   // every column, not just rank
            #expect(try StateNote.find(id: 1)?.title == "one" && StateNote.find(id: 1)?.rank == 1)
            // And an id nobody has: inserted there.
            first.id = 7
            try first.save()
            #expect(try StateNote.find(id: 7)?.title == "one")
            #expect(try StateNote.countAll() == 3)
        }
    }

    /// `fetch(sql:)` without the key gave objects that reported no changes, yet `save()`
    /// inserted a duplicate row filled with defaults.
    @Test func anObjectLoadedWithoutItsKeyCannotBeSavedOrDeleted() throws {
        try withModelDB { _ in
            try StateNote.createTable()
            let note = StateNote()
            note.title = "kept"
            note.rank = 3
            try note.save()
            let keyless = try #require(try StateNote.fetch(sql: "SELECT title, rank FROM state_note").first)
            #expect(keyless.id == nil && !keyless.hasChanges)
            keyless.rank = 9
            for attempt in [{ try keyless.save() }, { try keyless.update() }, { _ = try keyless.delete() }, { try keyless.reload() }] {
                expectActiveObjectError({ try attempt() }, matches: \.isMisuse)
            }
            #expect(try StateNote.countAll() == 1)
            #expect(try StateNote.find(id: 1)?.rank == 3)
            // insert() still adds it as a new row, on purpose.
            try keyless.insert()
            #expect(try StateNote.countAll() == 2)
        }
    }

    @Test func updateWithoutChangesStillRunsDidSave() throws {
        try withModelDB { _ in
            try StateNote.createTable()
            let note = StateNote()
            try note.save()
            #expect(note.saves == 1)
            try note.update()
            try note.save()
            #expect(note.saves == 3)
        }
    }

    /// Issue 11 item 4: the rollback log holds objects weakly and drops the entries of
    /// objects that are gone, so a long transaction streaming updates keeps it small.
    @Test func theRollbackLogKeepsNoObjectAliveAndStaysSmall() throws {
        try withModelDB { db in
            try StateNote.createTable()
            try db.transaction {
                for _ in 0..<3 { try StateNote().save() }
            }
            weak var released: StateNote?
            try db.transaction {
                for rank in 0..<20_000 {
                    let note = StateNote()
                    note.rank = rank
                    try note.save()
                    note.rank += 1
                    try note.save()
                    if rank == 0 { released = note }
                }
                let log = RollbackLog.of(db.writer)
                // Entries of dropped objects are compacted away every few thousand writes.
                #expect(log.count <= RollbackLog.minimumCompactionThreshold * 2, "\(log.count) entries for 0 live objects")
            }
            #expect(released == nil, "the log kept an object alive")
            // The restoring still works for the objects that are alive.
            let kept = try #require(try StateNote.find(id: 1))
            kept.title = "changed"
            try? db.transaction {
                try kept.save()
                for _ in 0..<10_000 { try StateNote().save() }
                throw TestFailure()
            }
            #expect(kept.hasChanges && kept.changedColumns == ["title"])
        }
    }

    @Test func didLoadRunsAfterEveryFetchAndReload() async throws {
        try withModelDB { _ in
            try StateNote.createTable()
            try StateNote().save()
            let note = try #require(try StateNote.find(id: 1))
            #expect(note.loads == 1)
            try note.reload()
            #expect(note.loads == 2)
            #expect(try StateNote.all.all().first?.loads == 1)
            #expect(try StateNote.fetch(sql: "SELECT * FROM state_note").first?.loads == 1)
            let fresh = StateNote()
            #expect(fresh.loads == 0)
        }
    }

    /// A save, then more edits, inside a transaction that rolls back: the saved change and the
    /// later edits are both pending, and the next save writes both.
    @Test func aRollbackKeepsTheEditsMadeAfterASaveInTheTransaction() throws {
        try withModelFileDB { db, _ in
            try StateNote.createTable()
            let note = StateNote()
            note.title = "A"
            try note.save()
            inRolledBackTransaction(db) {
                note.rank = 1
                try note.save()
                note.title = "B"
            }
            #expect(note.changedColumns == ["title", "rank"])
            try note.save()
            let stored = try #require(try StateNote.find(id: note.id!))
            #expect(stored.title == "B" && stored.rank == 1)
        }
    }

    /// Two saves of one object in a transaction that rolls back: the first save's change is
    /// pending again too.
    @Test func aRollbackAfterTwoSavesKeepsBothChangesPending() throws {
        try withModelFileDB { db, _ in
            try StateNote.createTable()
            let note = StateNote()
            try note.save()
            inRolledBackTransaction(db) {
                note.rank = 1
                try note.save()
                note.title = "second"
                try note.save()
            }
            #expect(note.changedColumns == ["title", "rank"])
            let stored = try #require(try StateNote.find(id: note.id!))
            #expect(stored.title == "" && stored.rank == 0)
            try note.save()
            let saved = try #require(try StateNote.find(id: note.id!))
            #expect(saved.title == "second" && saved.rank == 1)
        }
    }

    /// An async save of a model with an optional integer key (numbered by SQLite) leaves no
    /// change behind: the key SQLite chose is the row's.
    @Test func anAsyncSaveOfAnAutoNumberedKeyLeavesNoChange() async throws {
        let (db, folder) = try TestStorage.file.open()
        defer { try? db.close(); _ = folder }
        try await ModelTestDB.$current.withValue(db) {
            try synchronously { try SafetyTicket.createTable() }
            let ticket = SafetyTicket()
            ticket.title = "first"
            try await ticket.save()
            #expect(ticket.number != nil)
            #expect(!ticket.hasChanges && ticket.changedColumns.isEmpty)
            ticket.title = "renamed"
            try await ticket.save()
            let stored = try synchronously { try SafetyTicket.find(where: ["number": ticket.number]).first }
            #expect(stored?.title == "renamed")

            let batch = [SafetyTicket(), SafetyTicket()]
            for (index, ticket) in batch.enumerated() { ticket.title = "batch \(index)" }
            try await SafetyTicket.insertAll(batch)
            #expect(batch.allSatisfy { $0.number != nil && !$0.hasChanges })
            #expect(Set(batch).count == 2, "two rows, two distinct objects")
        }
    }

    /// A column whose value occupies no memory has no place of its own: refused, by name.
    @Test func aColumnOfAnEmptyTypeIsRefused() throws {
        try withModelDB { _ in
            #expect {
                try EmptyKindNote.createTable()
            } throws: { error in
                guard case ActiveObjectError.invalidModel(_, let reason) = error else { return false }
                return reason.contains("kind") && reason.contains("occupies no memory")
            }
        }
    }

    @Test func activeObjectIsIdentifiable() throws {
        func ids<T: Identifiable>(_ items: [T]) -> [T.ID] { items.map(\.id) }
        try withModelDB { _ in
            try PolishPerson.seed()
            #expect(ids(try PolishPerson.findAll()) == [1, 2, 3, 4])
        }
    }
}
