import Foundation
import Testing
@testable import ActiveObjects

final class SnapAuthor: ModelTestRecord {
    override class var tableName: String { "snap_author" }
    @Column var name = ""
    var books: HasMany<SnapBook> { hasMany(\.$authorId) }
    var profile: HasOne<SnapProfile> { hasOne(\.$authorId) }
    var tags: HasManyThrough<SnapTag> { hasMany(through: \SnapAuthorTag.$authorId, \SnapAuthorTag.$tagId) }
}

final class SnapBook: ModelTestRecord {
    override class var tableName: String { "snap_book" }
    @Column var title = ""
    @Column var authorId: Int64? = nil
    var author: BelongsTo<SnapAuthor> { belongsTo(\.$authorId) }
}

final class SnapProfile: ModelTestRecord {
    override class var tableName: String { "snap_profile" }
    @Column var bio = ""
    @Column var authorId: Int64? = nil
}

final class SnapTag: ModelTestRecord {
    override class var tableName: String { "snap_tag" }
    @Column var label = ""
}

final class SnapAuthorTag: ModelTestRecord {
    override class var tableName: String { "snap_author_tag" }
    override class var primaryKeys: [String] { ["authorId", "tagId"] }
    @Column var authorId: Int64 = 0
    @Column var tagId: Int64 = 0
}

/// Runs an action once, right after the first statement whose SQL contains a text: from a
/// database's `trace` hook, on the thread running that statement (which waits for it). Also
/// records the statements.
final class StatementTrap: @unchecked Sendable {
    // Safety: every stored property is only touched under `lock`.
    private let lock = NSLock()
    private var needle: String?
    private var action: (@Sendable () -> Void)?
    private var recorded: [String] = []

    /// The next statement containing `needle` runs `action` after it ran (once).
    func arm(after needle: String, _ action: @escaping @Sendable () -> Void) {
        lock.withLock {
            self.needle = needle
            self.action = action
        }
    }

    var hook: @Sendable (String, Duration) -> Void {
        { [self] sql, _ in
            let action: (@Sendable () -> Void)? = lock.withLock {
                recorded.append(sql)
                guard let needle, sql.contains(needle) else { return nil }
                defer { self.needle = nil; self.action = nil }
                return self.action
            }
            action?()
        }
    }

    var statements: [String] { lock.withLock { recorded } }
    func clear() { lock.withLock { recorded.removeAll() } }
}

/// Eager loading reads the rows and their relations in one snapshot, on a file with readers
/// exactly as in memory; and the relations it loaded serve the async forms too (API §15).
@Suite struct EagerLoadingSnapshotTests {
    static func withLibrary<T>(_ storage: TestStorage, _ body: (Database, StatementTrap, String) throws -> T) throws -> T {
        let trap = StatementTrap()
        var options = Database.Options()
        options.trace = trap.hook
        let (db, folder) = try storage.open("library.sqlite", options: options)
        defer { try? db.close() }
        return try ModelTestDB.$current.withValue(db) {
            try withLibraryTables(db)
            return try body(db, trap, folder.path("library.sqlite"))
        }
    }

    /// Another connection deletes every author between the books' SELECT and the preload: the
    /// books still come back with the authors of the snapshot they were read in.
    @Test(arguments: [TestStorage.file, .fileOneConnection])
    func rowsAndTheirRelationsAreReadInOneSnapshot(_ storage: TestStorage) throws {
        try Self.withLibrary(storage) { db, trap, path in
            let other = try Database(path: path)
            defer { try? other.close() }
            let deleted = Locked(false)
            trap.arm(after: "FROM \"snap_book\"") {
                // From another connection, on another thread (this one is inside the fetch).
                runOnAnotherThread {
                    // WAL: another connection commits while the fetch's snapshot is open.
                    if (try? other.execute("DELETE FROM snap_author")) != nil { deleted.withLock { $0 = true } }
                }
            }
            let books = try SnapBook.all.order(by: \.$id).including(\.author).all()
            #expect(deleted.current, "the other connection could not delete")
            #expect(books.count == 6)
            for book in books {
                #expect(book.authorId != nil)
                #expect(try book.author.get()?.name == "author \((book.authorId! - 1))",
                        "\(book.title) came back without its author: the preload read a later snapshot")
            }
            #expect(try db.scalar("SELECT count(*) FROM snap_author") as Int? == 0)
        }
    }

    /// The same window for children, has-one and many-to-many: rows added between the two
    /// SELECTs do not show up under their parents.
    @Test(arguments: [TestStorage.file])
    func childrenLoadedWithTheirParentsComeFromTheParentsSnapshot(_ storage: TestStorage) throws {
        try Self.withLibrary(storage) { _, trap, path in
            let other = try Database(path: path)
            defer { try? other.close() }
            trap.arm(after: "FROM \"snap_author\"") {
                runOnAnotherThread {
                    try? other.execute("INSERT INTO snap_book(title, authorId) VALUES ('late', 1)")
                    try? other.execute("DELETE FROM snap_profile")
                    try? other.execute("DELETE FROM snap_author_tag")
                }
            }
            let authors = try SnapAuthor.all.order(by: \.$id).including(\.books).including(\.profile).including(\.tags).all()
            #expect(authors.count == 3)
            for (index, author) in authors.enumerated() {
                #expect(try author.books.all().map(\.title) == ["a\(index)", "b\(index)"])
                #expect(try author.profile.get()?.bio == "bio \(index)")
                #expect(try author.tags.all().map(\.label) == ["tag \(index)"])
            }
            // The other connection's writes did happen.
            #expect(try SnapBook.countAll() == 7)
        }
    }

    /// `each` and a cursor with `including` load the relations of their last batch — after the
    /// statement's last step — from the rows' snapshot too: another connection renames the
    /// author while the chapter is being read.
    @Test func eachAndCursorsLoadTheirLastBatchsRelationsFromTheRowsSnapshot() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("walk.sqlite"))
        defer { try? db.close() }
        let other = try Database(path: folder.path("walk.sqlite"))
        defer { try? other.close() }
        try ModelTestDB.$current.withValue(db) {
            try SnapAuthor.createTable()
            try HookedChapter.createTable()
            let author = SnapAuthor()
            author.name = "original"
            try author.save()
            let chapter = HookedChapter()
            chapter.title = "one"
            chapter.authorId = author.id
            try chapter.save()
            defer { HookedChapter.onLoad.withLock { $0 = nil } }
            func renameOnFirstLoad(to name: String) {
                let armed = Locked(true)
                HookedChapter.onLoad.withLock {
                    $0 = { _ in
                        let first = armed.withLock { (value: inout Bool) -> Bool in
                            defer { value = false }
                            return value
                        }
                        guard first else { return }
                        runOnAnotherThread {
                            try? other.execute("UPDATE snap_author SET name = ?", [name])
                        }
                    }
                }
            }
            renameOnFirstLoad(to: "renamed by each")
            var seen: [String] = []
            try HookedChapter.all.including(\.author).each { seen.append((try? $0.author.get()?.name) ?? "-") }
            #expect(seen == ["original"], "each loaded the relation from a later snapshot: \(seen)")
            #expect(try SnapAuthor.find(id: author.id!)?.name == "renamed by each")

            try other.execute("UPDATE snap_author SET name = 'original'")
            renameOnFirstLoad(to: "renamed by the cursor")
            let cursor = try HookedChapter.all.including(\.author).cursor()
            let first = try cursor.next()
            #expect(try first?.author.get()?.name == "original", "the cursor loaded the relation from a later snapshot")
            #expect(try cursor.next() == nil)
            #expect(try SnapAuthor.find(id: author.id!)?.name == "renamed by the cursor")
        }
    }

    /// With one connection for everything, `each` with `including` opens no transaction around
    /// its body: the body's writes commit (or fail) as they would without `including`.
    @Test(arguments: [TestStorage.memory, .fileOneConnection])
    func aWalksBodyWritesAreNotHeldInATransactionOnOneConnection(_ storage: TestStorage) throws {
        let (db, folder) = try storage.open()
        defer { try? db.close(); withExtendedLifetime(folder) {} }
        try db.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
        try db.execute("CREATE TABLE child (id INTEGER PRIMARY KEY, parentId INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
        try ModelTestDB.$current.withValue(db) {
            try Self.withLibraryTables(db)
            var inTransaction: [Bool] = []
            #expect(throws: DatabaseError.self) {
                try SnapBook.all.including(\.author).limit(1).each { _ in
                    inTransaction.append(db.isInTransaction)
                    try db.execute("INSERT INTO child(parentId) VALUES (NULL)")
                    try db.execute("INSERT INTO child(parentId) VALUES (12345)")   // fails at its commit
                }
            }
            #expect(inTransaction == [false])
            #expect(try db.scalar("SELECT count(*) FROM child") as Int? == 1, "the body's first write was lost")
        }
    }

    /// After `including`, the async forms run no SQL, exactly like the synchronous ones.
    @Test(arguments: TestStorage.allCases)
    func asyncRelationReadsUseWhatWasPreloaded(_ storage: TestStorage) async throws {
        let trap = StatementTrap()
        var options = Database.Options()
        options.trace = trap.hook
        let (db, folder) = try storage.open("library.sqlite", options: options)
        defer { try? db.close(); withExtendedLifetime(folder) {} }
        try await ModelTestDB.$current.withValue(db) {
            try Self.withLibraryTables(db)
            let books = try await SnapBook.all.order(by: \.$id).including(\.author).all()
            let authors = try await SnapAuthor.all.order(by: \.$id).including(\.books).including(\.profile)
                .including(\.tags).all()
            trap.clear()
            var names: [String] = []
            for book in books { names.append(try await book.author.get()?.name ?? "-") }
            var counts: [Int] = []
            var bios: [String] = []
            var labels: [String] = []
            for author in authors {
                counts.append(try await author.books.all().count)
                counts.append(try await author.books.count())
                bios.append(try await author.profile.get()?.bio ?? "-")
                labels += try await author.tags.all().map(\.label)
                counts.append(try await author.tags.count())
            }
            #expect(trap.statements.isEmpty, "async reads of preloaded relations ran \(trap.statements)")
            #expect(names == ["author 0", "author 0", "author 1", "author 1", "author 2", "author 2"])
            #expect(counts == [2, 2, 1, 2, 2, 1, 2, 2, 1])
            #expect(bios == ["bio 0", "bio 1", "bio 2"])
            #expect(labels == ["tag 0", "tag 1", "tag 2"])
            // Without `including`, the async forms read the database, as before.
            let plain = try await SnapBook.all.order(by: \.$id).first()
            trap.clear()
            #expect(try await plain?.author.get()?.name == "author 0")
            #expect(!trap.statements.isEmpty)
        }
    }

    /// The tables and rows of `withLibrary`, for the async test.
    static func withLibraryTables(_ db: Database) throws {
        try SnapAuthor.createTable()
        try SnapBook.createTable()
        try SnapProfile.createTable()
        try SnapTag.createTable()
        try SnapAuthorTag.createTable()
        try db.transaction {
            for index in 0..<3 {
                let author = SnapAuthor()
                author.name = "author \(index)"
                try author.save()
                for title in ["a", "b"] {
                    let book = SnapBook()
                    book.title = "\(title)\(index)"
                    book.authorId = author.id
                    try book.save()
                }
                let profile = SnapProfile()
                profile.bio = "bio \(index)"
                profile.authorId = author.id
                try profile.save()
                let tag = SnapTag()
                tag.label = "tag \(index)"
                try tag.save()
                try author.tags.add(tag)
            }
        }
    }
}
