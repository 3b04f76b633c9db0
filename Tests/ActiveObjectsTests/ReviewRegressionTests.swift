import Foundation
import Testing
@testable import ActiveObjects

private let regressionDatabase = Locked<Database?>(nil)

final class RegWide: ActiveObject {
    override class var database: Database? { regressionDatabase.withLock { $0 } }
    @Column var c0 = 0; @Column var c1 = 0; @Column var c2 = 0; @Column var c3 = 0; @Column var c4 = 0
    @Column var c5 = 0; @Column var c6 = 0; @Column var c7 = 0; @Column var c8 = 0; @Column var c9 = 0
}

final class RegTeam: ActiveObject {
    override class var database: Database? { regressionDatabase.withLock { $0 } }
    @Column var name = ""
}

final class RegMember: ActiveObject {
    override class var database: Database? { regressionDatabase.withLock { $0 } }
    @Column(references: RegTeam.self) var teamId: Int64? = nil
    var team: BelongsTo<RegTeam> { belongsTo(\.$teamId) }
}

/// Regressions found in review: statement-cache keys reused by other SQL, `page` overflow and
/// offset handling, a preloaded parent outliving a changed foreign key.
@Suite(.serialized)
struct ReviewRegressionTests {
    /// Every subset of 10 columns as an UPDATE shape: more than the per-class cache of UPDATE
    /// SQL (256), so later shapes are built per save; each must write exactly its columns.
    @Test func everyUpdateShapeWritesItsOwnColumns() throws {
        let db = try Database.inMemory()
        regressionDatabase.withLock { $0 = db }
        defer { regressionDatabase.withLock { $0 = nil } }
        try RegWide.createTable()
        let row = RegWide()
        try row.save()
        var expected = Array(repeating: 0, count: 10)
        let keyPaths: [ReferenceWritableKeyPath<RegWide, Int>] = [\.c0, \.c1, \.c2, \.c3, \.c4, \.c5, \.c6, \.c7, \.c8, \.c9]
        for mask in 1..<1024 {
            for bit in 0..<10 where mask & (1 << bit) != 0 {
                expected[bit] = mask * 10 + bit
                row[keyPath: keyPaths[bit]] = expected[bit]
            }
            try row.save()
            let stored = try #require(try db.rows("SELECT * FROM reg_wide WHERE id = ?", [row.id!]).first)
            let values: [Int] = try (0..<10).map { try stored["c\($0)"] }
            #expect(values == expected, "mask \(mask)")
            if values != expected { break }
        }
    }

    @Test func pageReplacesLimitAndOffsetAndNeverOverflows() throws {
        let db = try Database.inMemory()
        regressionDatabase.withLock { $0 = db }
        defer { regressionDatabase.withLock { $0 = nil } }
        try RegTeam.createTable()
        try db.transaction { for i in 0..<50 { let team = RegTeam(); team.name = "t\(i)"; try team.save() } }
        let query = RegTeam.all.order(by: "id").limit(20).offset(40)
        #expect(try query.page(3, size: 20).map(\.name) == (40..<50).map { "t\($0)" })
        #expect(try query.page(2, size: 10).map(\.name) == (10..<20).map { "t\($0)" })
        #expect(throws: ActiveObjectError.self) { _ = try RegTeam.all.offset(Int.max).page(Int.max, size: 2) }
        #expect(try RegTeam.all.offset(Int.max).page(2, size: 1).map(\.name) == ["t1"])
    }

    @Test func aPreloadedParentYieldsToAChangedForeignKey() throws {
        let db = try Database.inMemory()
        regressionDatabase.withLock { $0 = db }
        defer { regressionDatabase.withLock { $0 = nil } }
        try RegTeam.createTable()
        try RegMember.createTable()
        let a = RegTeam(); a.name = "A"; try a.save()
        let b = RegTeam(); b.name = "B"; try b.save()
        let member = RegMember(); member.teamId = a.id; try member.save()
        let loaded = try #require(try RegMember.all.including(\.team).all().first)
        #expect(try loaded.team.get()?.name == "A")
        loaded.teamId = b.id
        #expect(try loaded.team.get()?.name == "B", "the key changed: the preloaded parent no longer applies")
        loaded.teamId = nil
        #expect(try loaded.team.get() == nil)
    }
}
