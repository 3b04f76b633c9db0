import Foundation
import Testing
@testable import ActiveObjects

// Column roles under sync (API.md §18–§19): a pulled change is applied without a version check
// (never a stale write), replicas converge on every role column, a soft delete travels as an
// update, and a local object loaded before a pull of a change to its row is stale.

final class SyncPost: ActiveObject {
    override class var database: Database? { SyncTestDevice.database }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = UUID()
    @Column var title = ""
    @Column var body = ""
    @Column(role: .createdAt) var createdAt: Date? = nil
    @Column(role: .updatedAt) var updatedAt: Date? = nil
    @Column(role: .deletedAt) var deletedAt: Date? = nil
    @Column(role: .lockVersion) var lockVersion = 0
}

@Suite struct SyncRolesTests {
    @Test func concurrentEditsOnTwoDevicesMergeWithoutStaleErrors() async throws {
        let world = try SyncWorld(hubModels: [SyncPost.self])
        let (a, engineA) = try world.addDevice(models: [SyncPost.self])
        let (b, engineB) = try world.addDevice(models: [SyncPost.self])
        let post = SyncPost()
        post.title = "draft"
        try onDevice(a) { try post.save() }
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        let created = try onDevice(b) { try SyncPost.find(key: post.uuid)?.createdAt }
        #expect(created == post.createdAt)                 // the creation date travelled, not restamped

        // Both devices edit the same row, each from version 0.
        post.title = "title from a"
        try onDevice(a) { try post.save() }
        let onB = try #require(try onDevice(b) { try SyncPost.find(key: post.uuid) })
        onB.body = "body from b"
        try onDevice(b) { try onB.save() }
        #expect(post.lockVersion == 1 && onB.lockVersion == 1)

        // The merges apply without any version check: no error, and every replica ends equal.
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        _ = try await engineA.synchronize()
        #expect(try dump(a, "sync_post") == dump(b, "sync_post"))
        let merged = try #require(try onDevice(a) { try SyncPost.find(key: post.uuid) })
        #expect(merged.title == "title from a" && merged.body == "body from b")

        // Objects loaded after the merge save normally on both devices.
        merged.title = "after the merge"
        try onDevice(a) { try merged.save() }
        let againOnB = try #require(try onDevice(b) { try SyncPost.find(key: post.uuid) })
        againOnB.body = "also after"
        try onDevice(b) { try againOnB.save() }
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        _ = try await engineA.synchronize()
        #expect(try dump(a, "sync_post") == dump(b, "sync_post"))
    }

    @Test func anObjectLoadedBeforeAPulledChangeOfItsRowIsStale() async throws {
        let world = try SyncWorld(hubModels: [SyncPost.self])
        let (a, engineA) = try world.addDevice(models: [SyncPost.self])
        let (b, engineB) = try world.addDevice(models: [SyncPost.self])
        let post = SyncPost()
        try onDevice(a) { try post.save() }
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        let onB = try #require(try onDevice(b) { try SyncPost.find(key: post.uuid) })
        let heldOnA = try #require(try onDevice(a) { try SyncPost.find(key: post.uuid) })

        onB.title = "edited on b"
        try onDevice(b) { try onB.save() }
        _ = try await engineB.synchronize()
        let report = try await engineA.synchronize()        // the pull itself never fails
        #expect(report.pulled == 1)

        heldOnA.title = "edited on a from an old copy"
        #expect(throws: ActiveObjectError.staleObject(table: "sync_post", key: post.uuid.uuidString.lowercased())) {
            try onDevice(a) { try heldOnA.save() }
        }
        #expect(try onDevice(a) { try SyncPost.find(key: post.uuid)?.title } == "edited on b")
        try onDevice(a) {
            try heldOnA.reload()
            heldOnA.title = "edited on a, knowingly"
            try heldOnA.save()
        }
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        #expect(try dump(a, "sync_post") == dump(b, "sync_post"))
    }

    @Test func aSoftDeleteAndARestoreTravelAsUpdates() async throws {
        let world = try SyncWorld(hubModels: [SyncPost.self])
        let (a, engineA) = try world.addDevice(models: [SyncPost.self])
        let (b, engineB) = try world.addDevice(models: [SyncPost.self])
        let post = SyncPost()
        try onDevice(a) { try post.save() }
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()

        try onDevice(a) { _ = try post.delete() }
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        let markedOnB: String? = try await b.scalar("SELECT deletedAt FROM sync_post")
        #expect(markedOnB != nil)
        #expect(try await b.scalar("SELECT count(*) FROM sync_post") == 1)   // the row is still there

        let binned = try #require(try onDevice(b) { try SyncPost.all.onlyDeleted().first() })
        try onDevice(b) { try binned.restore() }
        _ = try await engineB.synchronize()
        _ = try await engineA.synchronize()
        let markedOnA: String? = try await a.scalar("SELECT deletedAt FROM sync_post")
        #expect(markedOnA == nil)
        #expect(try dump(a, "sync_post") == dump(b, "sync_post"))
    }
}
