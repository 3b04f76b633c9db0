import Foundation
import Testing
@testable import ActiveObjects

// `.createdAt` / `.updatedAt` (API.md §19): stamped by the library, on file databases with the
// default options, and `withoutTimestamps { }` scoped to the calling thread or task.

final class StampedPost: ModelTestRecord {
    @Column var title = ""
    @Column(role: .createdAt) var createdAt: Date? = nil
    @Column(role: .updatedAt) var updatedAt: Date? = nil
}

/// Non-optional dates: stamped on every insert.
final class StampedEvent: ModelTestRecord {
    @Column var name = ""
    @Column(role: .createdAt) var createdAt = Date(timeIntervalSince1970: 0)
    @Column(role: .updatedAt) var updatedAt = Date(timeIntervalSince1970: 0)
}

/// A natural key, for upserts.
final class StampedTag: ModelTestRecord {
    override class var primaryKey: String { "label" }
    @Column var label = ""
    @Column var uses = 0
    @Column(role: .createdAt) var createdAt: Date? = nil
    @Column(role: .updatedAt) var updatedAt: Date? = nil
}

/// Runs `body` with a fresh WAL file database (default options) for the test models.
func withFileModelDB<T>(_ body: (Database) throws -> T) throws -> T {
    let folder = try TemporaryDirectory()
    let db = try Database(path: folder.path("models.sqlite"))
    defer { try? db.close() }
    return try ModelTestDB.$current.withValue(db) { try body(db) }
}

/// True when `date` lies between `start` and now, allowing the millisecond the date strategy
/// rounds to.
func isRecent(_ date: Date?, since start: Date) -> Bool {
    guard let date else { return false }
    return date >= start.addingTimeInterval(-0.002) && date <= Date().addingTimeInterval(0.002)
}

@Suite struct TimestampsTests {
    let past = Date(timeIntervalSince1970: 1_000_000_000)   // 2001-09-09

    @Test func insertStampsBothDatesAndTheObjectHoldsWhatTheRowHolds() throws {
        try withFileModelDB { _ in
            try StampedPost.createTable()
            let start = Date()
            let post = StampedPost()
            post.title = "Hello"
            try post.save()
            #expect(isRecent(post.createdAt, since: start))
            #expect(post.updatedAt == post.createdAt)
            #expect(!post.hasChanges)
            let row = try #require(try StampedPost.find(id: post.id!))
            #expect(row.createdAt == post.createdAt)
            #expect(row.updatedAt == post.updatedAt)
        }
    }

    @Test func updateMovesUpdatedAtOnlyWhenSomethingIsWritten() throws {
        try withFileModelDB { db in
            try StampedPost.createTable()
            let post = StampedPost()
            try post.save()
            try db.execute("UPDATE stamped_post SET createdAt = ?, updatedAt = ?", [past, past])
            try post.reload()

            try post.save()                              // nothing changed: nothing written
            #expect(post.updatedAt == past)
            let start = Date()
            post.title = "Edited"
            try post.save()
            #expect(post.createdAt == past)              // creation date untouched
            #expect(isRecent(post.updatedAt, since: start))
            let row = try #require(try StampedPost.find(id: post.id!))
            #expect(row.createdAt == past)
            #expect(row.updatedAt == post.updatedAt)
        }
    }

    @Test func aCreationDateSetByTheUserIsKeptWhenOptional() throws {
        try withFileModelDB { _ in
            try StampedPost.createTable()
            let post = StampedPost()
            post.createdAt = past
            try post.save()
            #expect(post.createdAt == past)
            #expect(try StampedPost.find(id: post.id!)?.createdAt == past)
            #expect(post.updatedAt != past && post.updatedAt != nil)
        }
    }

    @Test func anUpdatedAtAssignedByTheUserIsWrittenAsAssigned() throws {
        try withFileModelDB { _ in
            try StampedPost.createTable()
            let post = StampedPost()
            try post.save()
            post.updatedAt = past
            try post.save()
            #expect(try StampedPost.find(id: post.id!)?.updatedAt == past)
        }
    }

    @Test func nonOptionalDatesAreStampedOnInsert() throws {
        try withFileModelDB { _ in
            try StampedEvent.createTable()
            let start = Date()
            let event = StampedEvent()
            try event.insert()
            #expect(isRecent(event.createdAt, since: start))
            #expect(isRecent(try StampedEvent.find(id: event.id!)?.updatedAt, since: start))
        }
    }

    @Test func withoutTimestampsWritesTheValuesAsSet() throws {
        try withFileModelDB { _ in
            try StampedPost.createTable()
            let imported = StampedPost()
            imported.createdAt = past
            imported.updatedAt = past
            try ActiveObject.withoutTimestamps { try imported.save() }
            let bare = StampedPost()
            try ActiveObject.withoutTimestamps { try bare.save() }
            #expect(try StampedPost.find(id: imported.id!)?.updatedAt == past)
            #expect(try StampedPost.find(id: bare.id!)?.createdAt == nil)
            #expect(try StampedPost.find(id: bare.id!)?.updatedAt == nil)

            imported.title = "Fixed a typo"
            try ActiveObject.withoutTimestamps { try imported.save() }
            #expect(try StampedPost.find(id: imported.id!)?.updatedAt == past)
            // The scope ended: stamping is back.
            imported.title = "Again"
            try imported.save()
            #expect(imported.updatedAt != past)
        }
    }

    @Test func scopesNestAndReturnTheirResult() throws {
        let result: Int = ActiveObject.withoutTimestamps {
            #expect(Timestamps.areSuspended)
            let inner: Int = ActiveObject.withoutTimestamps { 41 }
            #expect(Timestamps.areSuspended)
            return inner + 1
        }
        #expect(result == 42)
        #expect(!Timestamps.areSuspended)
        struct Stop: Error {}
        #expect(throws: Stop.self) { try ActiveObject.withoutTimestamps { throw Stop() } }
        #expect(!Timestamps.areSuspended)
    }

    @Test func insertAllStampsEveryObject() throws {
        try withFileModelDB { _ in
            try StampedPost.createTable()
            let start = Date()
            let posts = (0..<5).map { index -> StampedPost in
                let post = StampedPost()
                post.title = "p\(index)"
                return post
            }
            posts[2].createdAt = past
            try StampedPost.insertAll(posts)
            for (index, post) in posts.enumerated() {
                #expect(index == 2 ? post.createdAt == past : isRecent(post.createdAt, since: start))
                #expect(isRecent(post.updatedAt, since: start))
                #expect(!post.hasChanges)
                #expect(try StampedPost.find(id: post.id!)?.createdAt == post.createdAt)
            }
            let kept = StampedPost()
            kept.updatedAt = past
            try ActiveObject.withoutTimestamps { try StampedPost.insertAll([kept]) }
            #expect(try StampedPost.find(id: kept.id!)?.updatedAt == past)
            #expect(try StampedPost.find(id: kept.id!)?.createdAt == nil)
        }
    }

    @Test func anUpsertThatMeetsARowKeepsItsCreationDate() throws {
        try withFileModelDB { db in
            try StampedTag.createTable()
            let first = StampedTag()
            first.label = "swift"
            try first.save()
            try db.execute("UPDATE stamped_tag SET createdAt = ?", [past])
            let again = StampedTag()
            again.label = "swift"
            again.uses = 3
            let start = Date()
            try again.upsert()
            #expect(again.createdAt == past)           // the row's, returned by the upsert
            #expect(isRecent(again.updatedAt, since: start))
            let row = try #require(try StampedTag.find(key: "swift"))
            #expect(row.createdAt == past)
            #expect(row.uses == 3)
            #expect(!again.hasChanges)
        }
    }

    @Test func asyncWritesStampAndAsyncScopesHold() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("async.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try StampedPost.createTable()
            let start = Date()
            let post = StampedPost()
            try await post.save()
            #expect(isRecent(post.createdAt, since: start))
            let imported = StampedPost()
            imported.updatedAt = past
            try await ActiveObject.withoutTimestamps {
                try await Task.sleep(nanoseconds: 1_000_000)   // the scope survives a suspension
                try await imported.save()
            }
            #expect(imported.updatedAt == past)
            let stored = try await StampedPost.find(id: imported.id!)
            #expect(stored?.updatedAt == past)
            post.title = "changed"
            try await post.save()
            #expect(post.updatedAt! >= post.createdAt!)
            #expect(!post.hasChanges)
        }
    }

    @Test func aRolledBackSaveGivesTheObjectItsDatesBack() throws {
        try withFileModelDB { db in
            try StampedPost.createTable()
            let post = StampedPost()
            try post.save()
            try db.execute("UPDATE stamped_post SET updatedAt = ?", [past])
            try post.reload()
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try db.transaction {
                    post.title = "never"
                    try post.save()
                    #expect(post.updatedAt != past)
                    throw Abort()
                }
            }
            #expect(post.updatedAt == past)
            #expect(post.hasChanges)                      // the title is still to save
            try post.save()
            #expect(try StampedPost.find(id: post.id!)?.title == "never")
        }
    }
}

/// Concurrent saves in and out of `withoutTimestamps` scopes, on threads and in tasks: a scope
/// never leaks to a save outside it.
@Suite struct WithoutTimestampsIsolationTests {
    static let sentinel = Date(timeIntervalSince1970: 86_400)   // 1970-01-02

    /// One save: inside a scope when `scoped`; true when the stored dates show the scope
    /// (sentinel kept) exactly when it should.
    static func saveAndCheck(scoped: Bool) throws -> Bool {
        let post = StampedPost()
        post.createdAt = sentinel
        post.updatedAt = Self.sentinel
        if scoped {
            try ActiveObject.withoutTimestamps { try post.save() }
        } else {
            try post.save()
        }
        let stored = try StampedPost.find(id: post.id!)
        let keptSentinel = stored?.updatedAt == sentinel
        return keptSentinel == scoped
    }

    @Test func scopesOnThreadsNeverLeak() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("threads.sqlite"))
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) { try StampedPost.createTable() }
        let failures = LockedValue(0)
        let errors = LockedValue<[String]>([])
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            Thread {
                defer { group.leave() }
                ModelTestDB.$current.withValue(db) {
                    for round in 0..<60 {
                        do {
                            // Alternate, and nest a scope inside a scope sometimes.
                            let scoped = (thread + round) % 2 == 0
                            let ok = round % 7 == 0 && scoped
                                ? try ActiveObject.withoutTimestamps { try Self.saveAndCheck(scoped: true) }
                                : try Self.saveAndCheck(scoped: scoped)
                            if !ok { failures.withLock { $0 += 1 } }
                        } catch {
                            errors.withLock { $0.append("\(error)") }
                        }
                    }
                }
            }.start()
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0 }.prefix(3))")
        #expect(failures.withLock { $0 } == 0)
        let total = try ModelTestDB.$current.withValue(db) { try StampedPost.countAll() }
        #expect(total == 8 * 60)
    }

    @Test func scopesInTasksNeverLeak() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("tasks.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try StampedPost.createTable()
            let results = try await withTimeout(60) {
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in 0..<40 {
                        group.addTask {
                            let scoped = index % 2 == 0
                            let post = StampedPost()
                            post.updatedAt = Self.sentinel
                            if scoped {
                                try await ActiveObject.withoutTimestamps {
                                    await Task.yield()
                                    try await post.save()
                                }
                            } else {
                                await Task.yield()
                                try await post.save()
                            }
                            return (post.updatedAt == Self.sentinel) == scoped
                        }
                    }
                    var all: [Bool] = []
                    for try await result in group { all.append(result) }
                    return all
                }
            }
            #expect(results.count == 40)
            #expect(results.allSatisfy { $0 })
            // A detached task started inside a scope is outside it.
            let detachedStamps: Bool = await ActiveObject.withoutTimestamps {
                await Task.detached { !Timestamps.areSuspended }.value
            }
            #expect(detachedStamps)
        }
    }
}
