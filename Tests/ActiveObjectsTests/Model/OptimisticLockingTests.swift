import Foundation
import Testing
@testable import ActiveObjects

// `.lockVersion` (API.md §19): a save or delete of a loaded object checks the version it was
// loaded with; a stale write writes nothing, leaves the object as it was, and throws.

final class LockedDoc: ModelTestRecord {
    @Column var title = ""
    @Column var body = ""
    @Column(role: .lockVersion) var lockVersion = 0
}

final class LockedNote: ModelTestRecord {
    override class var primaryKey: String { "code" }
    @Column var code = ""
    @Column var text = ""
    @Column(role: .lockVersion) var version: Int64 = 0
    @Column(role: .updatedAt) var updatedAt: Date? = nil
    @Column(role: .deletedAt) var deletedAt: Date? = nil
}

final class TinyVersion: ModelTestRecord {
    @Column var title = ""
    @Column(role: .lockVersion) var lockVersion: Int8 = 0
}

@Suite struct OptimisticLockingTests {
    /// A saved document, and two copies of it loaded separately.
    func twoCopies() throws -> (LockedDoc, LockedDoc) {
        try LockedDoc.createTable()
        let doc = LockedDoc()
        doc.title = "v0"
        try doc.save()
        #expect(doc.lockVersion == 0)
        return (try #require(try LockedDoc.find(id: doc.id!)), try #require(try LockedDoc.find(id: doc.id!)))
    }

    @Test func aSaveIncrementsTheVersionAndAStaleSaveThrowsWritingNothing() throws {
        try withFileModelDB { _ in
            let (mine, theirs) = try twoCopies()
            theirs.title = "theirs"
            try theirs.save()
            #expect(theirs.lockVersion == 1)

            mine.title = "mine"
            mine.body = "body"
            #expect(throws: ActiveObjectError.staleObject(table: "locked_doc", key: "\(mine.id!)")) { try mine.save() }
            // Nothing written, the object as it was.
            let row = try #require(try LockedDoc.find(id: mine.id!))
            #expect(row.title == "theirs" && row.body == "" && row.lockVersion == 1)
            #expect(mine.lockVersion == 0)
            #expect(mine.title == "mine")
            #expect(Set(mine.changedColumns) == ["title", "body"])

            // The way out: reload, edit again, save.
            try mine.reload()
            mine.title = "mine"
            try mine.save()
            #expect(mine.lockVersion == 2)
            #expect(try LockedDoc.find(id: mine.id!)?.lockVersion == 2)
        }
    }

    @Test func aSaveWithoutChangesChecksNothingAndWritesNothing() throws {
        try withFileModelDB { _ in
            let (mine, theirs) = try twoCopies()
            theirs.title = "theirs"
            try theirs.save()
            try mine.save()                                   // no change: no SQL, no error
            #expect(throws: ActiveObjectError.staleObject(table: "locked_doc", key: "\(mine.id!)")) { try mine.update() }
        }
    }

    @Test func aRowThatVanishedIsStaleForSaveAndDelete() throws {
        try withFileModelDB { db in
            let (mine, _) = try twoCopies()
            try db.execute("DELETE FROM locked_doc")
            mine.title = "edit"
            #expect(throws: ActiveObjectError.staleObject(table: "locked_doc", key: "\(mine.id!)")) { try mine.save() }
            #expect(throws: ActiveObjectError.staleObject(table: "locked_doc", key: "\(mine.id!)")) { try mine.delete() }
        }
    }

    @Test func aStaleDeleteDeletesNothing() throws {
        try withFileModelDB { _ in
            let (mine, theirs) = try twoCopies()
            theirs.body = "changed"
            try theirs.save()
            #expect(throws: ActiveObjectError.staleObject(table: "locked_doc", key: "\(mine.id!)")) { try mine.delete() }
            #expect(try LockedDoc.countAll() == 1)
            #expect(try theirs.delete())
            #expect(try LockedDoc.countAll() == 0)
        }
    }

    @Test func aVersionAssignedByHandStillChecksTheLoadedOne() throws {
        try withFileModelDB { _ in
            let (mine, _) = try twoCopies()
            mine.lockVersion = 7          // not how to skip the check
            mine.title = "x"
            try mine.save()               // the row held 0, as loaded: accepted, version 1
            #expect(mine.lockVersion == 1)
            #expect(try LockedDoc.find(id: mine.id!)?.lockVersion == 1)
        }
    }

    @Test func asyncFormsCheckTheVersionToo() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("async.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            let (mine, theirs) = try twoCopies()
            theirs.title = "theirs"
            try await theirs.save()
            #expect(theirs.lockVersion == 1)
            mine.title = "mine"
            await #expect(throws: ActiveObjectError.staleObject(table: "locked_doc", key: "\(mine.id!)")) {
                try await mine.save()
            }
            #expect(mine.lockVersion == 0 && mine.hasChanges)
            await #expect(throws: ActiveObjectError.staleObject(table: "locked_doc", key: "\(mine.id!)")) {
                try await mine.delete()
            }
            try await mine.reload()
            #expect(try await mine.delete())
        }
    }

    @Test func aRollbackGivesTheObjectItsVersionBack() throws {
        try withFileModelDB { db in
            let (mine, _) = try twoCopies()
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try db.transaction {
                    mine.title = "rolled back"
                    try mine.save()
                    #expect(mine.lockVersion == 1)
                    throw Abort()
                }
            }
            #expect(mine.lockVersion == 0)
            try mine.save()                      // not stale: the row is at 0 again
            #expect(mine.lockVersion == 1)
        }
    }

    @Test func naturalKeysSoftDeleteAndRestoreCountVersions() throws {
        try withFileModelDB { _ in
            try LockedNote.createTable()
            let note = LockedNote()
            note.code = "n1"
            try note.save()
            let stale = try #require(try LockedNote.find(key: "n1"))
            #expect(try note.delete())                    // soft: a version more
            #expect(note.version == 1 && note.deletedAt != nil)
            #expect(throws: ActiveObjectError.staleObject(table: "locked_note", key: "n1")) { try stale.delete() }
            #expect(throws: ActiveObjectError.staleObject(table: "locked_note", key: "n1")) { try stale.restore() }
            try note.restore()
            #expect(note.version == 2 && note.deletedAt == nil)
            #expect(!(try note.delete(permanently: false)) == false)
            // Deleting again what is already soft-deleted: no error, nothing done.
            #expect(try note.delete() == false)
        }
    }

    @Test func aVersionThatCannotGrowIsAClearError() throws {
        try withFileModelDB { db in
            try TinyVersion.createTable()
            let tiny = TinyVersion()
            try tiny.save()
            try db.execute("UPDATE tiny_version SET lockVersion = 127")
            try tiny.reload()
            tiny.title = "one more"
            do {
                try tiny.save()
                Issue.record("saved past Int8.max")
            } catch let error as ActiveObjectError {
                guard case .invalidValue(let table, let column, _) = error else { Issue.record("\(error)"); return }
                #expect(table == "tiny_version" && column == "lockVersion")
            }
            #expect(try TinyVersion.find(id: tiny.id!)?.title == "")
        }
    }

    @Test func insertAllWritesTheVersionAsHeld() throws {
        try withFileModelDB { _ in
            try LockedDoc.createTable()
            let docs = (0..<3).map { _ in LockedDoc() }
            try LockedDoc.insertAll(docs)
            #expect(try LockedDoc.all.pluck(\.$lockVersion) == [0, 0, 0])
            docs[1].title = "edited"
            try docs[1].save()
            #expect(docs[1].lockVersion == 1)
        }
    }

    @Test func upsertCountsAVersionWhenItMeetsARow() throws {
        try withFileModelDB { _ in
            try LockedNote.createTable()
            let note = LockedNote()
            note.code = "n"
            try note.save()
            let again = LockedNote()
            again.code = "n"
            again.text = "upserted"
            try again.upsert()
            #expect(again.version == 1)
            #expect(try LockedNote.find(key: "n")?.version == 1)
            again.text = "then saved"
            try again.save()
            #expect(again.version == 2)
        }
    }
}
