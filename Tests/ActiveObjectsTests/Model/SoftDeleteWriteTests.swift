import Foundation
import Testing
@testable import ActiveObjects

// Object-level soft delete (API.md §19): `delete()` marks, `restore()` unmarks,
// `delete(permanently: true)` deletes; hooks run as for a delete.

final class BinnedPost: ModelTestRecord {
    @Column var title = ""
    @Column(role: .updatedAt) var updatedAt: Date? = nil
    @Column(role: .deletedAt) var deletedAt: Date? = nil

    var hooks: [String] = []
    override func willDelete() throws { hooks.append("willDelete") }
    override func didDelete() { hooks.append("didDelete") }
}

@Suite struct SoftDeleteWriteTests {
    @Test func deleteMarksTheRowAndRunsTheHooks() throws {
        try withFileModelDB { db in
            try BinnedPost.createTable()
            let post = BinnedPost()
            post.title = "draft"
            try post.save()
            let start = Date()
            #expect(try post.delete())
            #expect(post.hooks == ["willDelete", "didDelete"])
            #expect(isRecent(post.deletedAt, since: start))
            #expect(post.updatedAt == post.deletedAt)
            #expect(!post.hasChanges)
            #expect(post.id != nil)
            // The row is still in the table, marked.
            let stored: String? = try db.scalar("SELECT deletedAt FROM binned_post WHERE id = ?", [post.id!])
            #expect(stored != nil)
            #expect(try count(db, "SELECT count(*) FROM binned_post") == 1)
            // Deleting it again does nothing.
            #expect(try post.delete() == false)
        }
    }

    @Test func restoreBringsItBackAndDeletePermanentlyRemovesIt() throws {
        try withFileModelDB { db in
            try BinnedPost.createTable()
            let post = BinnedPost()
            try post.save()
            try post.delete()
            try post.restore()
            #expect(post.deletedAt == nil)
            #expect(try count(db, "SELECT count(*) FROM binned_post WHERE deletedAt IS NULL") == 1)
            #expect(try post.delete(permanently: true))
            #expect(post.hooks == ["willDelete", "didDelete", "willDelete", "didDelete"])
            #expect(try count(db, "SELECT count(*) FROM binned_post") == 0)
            #expect(throws: ActiveObjectError.recordNotFound(table: "binned_post", id: post.id)) { try post.restore() }
        }
    }

    @Test func aSoftDeleteKeepsOtherUnsavedEditsPending() throws {
        try withFileModelDB { db in
            try BinnedPost.createTable()
            let post = BinnedPost()
            post.title = "saved"
            try post.save()
            post.title = "unsaved"
            try post.delete()
            #expect(post.changedColumns == ["title"])
            #expect(try db.scalar("SELECT title FROM binned_post") == "saved")
        }
    }

    @Test func aThrowingHookCancelsTheSoftDelete() throws {
        final class Guarded: ModelTestRecord {
            @Column var title = ""
            @Column(role: .deletedAt) var deletedAt: Date? = nil
            override func willDelete() throws { throw ValidationError("title", "is protected") }
        }
        try withFileModelDB { db in
            try Guarded.createTable()
            let guarded = Guarded()
            try guarded.save()
            #expect(throws: ValidationError.self) { try guarded.delete() }
            #expect(guarded.deletedAt == nil)
            #expect(try count(db, "SELECT count(*) FROM guarded WHERE deletedAt IS NULL") == 1)
        }
    }

    @Test func restoreOfAModelWithoutTheRoleIsMisuse() throws {
        try withFileModelDB { _ in
            try LockedDoc.createTable()
            let doc = LockedDoc()
            try doc.save()
            do {
                try doc.restore()
                Issue.record("restored a model that cannot soft-delete")
            } catch let error as ActiveObjectError {
                guard case .misuse(let reason) = error else { Issue.record("\(error)"); return }
                #expect(reason.contains("LockedDoc") && reason.contains("deletedAt"))
            }
        }
    }

    @Test func asyncDeleteRestoreAndPermanentDelete() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("async.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try BinnedPost.createTable()
            let post = BinnedPost()
            try await post.save()
            #expect(try await post.delete())
            #expect(post.deletedAt != nil)
            try await post.restore()
            #expect(post.deletedAt == nil)
            #expect(try await post.delete(permanently: true))
            let left: Int? = try await db.scalar("SELECT count(*) FROM binned_post")
            #expect(left == 0)
        }
    }

    @Test func aRolledBackSoftDeleteLeavesTheObjectUndeleted() throws {
        try withFileModelDB { db in
            try BinnedPost.createTable()
            let post = BinnedPost()
            try post.save()
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try db.transaction {
                    try post.delete()
                    throw Abort()
                }
            }
            #expect(post.deletedAt == nil)
            #expect(try post.delete())
        }
    }
}

@Suite struct ColumnRoleModelTests {
    @Test func twoColumnsWithOneRoleAreRefusedNamingThem() throws {
        final class TwoClocks: ModelTestRecord {
            @Column(role: .updatedAt) var changedAt: Date? = nil
            @Column(role: .updatedAt) var modifiedAt: Date? = nil
        }
        do {
            _ = try ModelSchema.of(TwoClocks.self)
            Issue.record("accepted two .updatedAt columns")
        } catch let error as ActiveObjectError {
            guard case .invalidModel(let model, let reason) = error else { Issue.record("\(error)"); return }
            #expect(model == "TwoClocks")
            #expect(reason.contains("changedAt") && reason.contains("modifiedAt") && reason.contains("updatedAt"))
        }
    }

    @Test func aDeletedAtWithADateByDefaultIsRefused() throws {
        // `= Date()` makes the property `Date?` with a date: every new object would be binned.
        final class BornDeleted: ModelTestRecord {
            @Column var title = ""
            @Column(role: .deletedAt) var deletedAt = Date()
        }
        do {
            _ = try ModelSchema.of(BornDeleted.self)
            Issue.record("accepted a .deletedAt column whose default is a date")
        } catch let error as ActiveObjectError {
            guard case .invalidModel(_, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("deletedAt") && reason.contains("nil"))
        }
    }

    @Test func aRoleOnTheKeyIsRefused() throws {
        final class KeyedByVersion: ModelTestRecord {
            override class var primaryKey: String { "version" }
            @Column(role: .lockVersion) var version = 0
        }
        #expect(throws: ActiveObjectError.self) { try KeyedByVersion.createTable() }
    }

    @Test func theSchemaKnowsEachRoleSlot() throws {
        let schema = try ModelSchema.of(LockedNote.self)
        #expect(schema.roles.lockVersion == 2)
        #expect(schema.roles.updatedAt == 3)
        #expect(schema.roles.deletedAt == 4)
        #expect(schema.roles.createdAt == nil)
    }
}
