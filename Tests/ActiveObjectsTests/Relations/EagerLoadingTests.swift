import CSQLite
import Foundation
import Testing
@testable import ActiveObjects

final class EagerGroup: SchemaTestModel {
    @Column var name: String = ""
    var people: HasMany<EagerPerson> { hasMany(\.$groupId) }
    var captain: HasOne<EagerPerson> { hasOne(\.$groupId) }
}

final class EagerPerson: SchemaTestModel {
    @Column var name: String = ""
    @Column var age: Int = 0
    @Column(references: EagerGroup.self, onDelete: .setNull) var groupId: Int64? = nil
    var group: BelongsTo<EagerGroup> { belongsTo(\.$groupId) }
    var badge: HasOne<EagerBadge> { hasOne(\.$personId) }
}

final class EagerBadge: SchemaTestModel {
    @Column var label: String = ""
    @Column(references: EagerPerson.self, onDelete: .cascade) var personId: Int64? = nil
}

/// `including(_:)`: one extra SELECT per relation, and no SQL when the relation is read.
@Suite struct EagerLoadingTests {
    /// Groups g0…g(groups-1); person i belongs to group i % groups, except every 5th (NULL).
    @discardableResult
    static func populate(_ fx: SchemaFixture, groups: Int, people: Int, nullEvery: Int = 5) throws -> [EagerGroup] {
        try fx.run { () throws in
            try EagerGroup.createTable()
            try EagerPerson.createTable()
            try EagerBadge.createTable()
            return try fx.db.transaction {
                var made: [EagerGroup] = []
                for g in 0..<groups {
                    let group = EagerGroup(); group.name = "g\(g)"
                    try group.save()
                    made.append(group)
                }
                for i in 0..<people {
                    let person = EagerPerson(); person.name = "p\(i)"; person.age = i
                    person.groupId = i % nullEvery == nullEvery - 1 ? nil : made[i % groups].id
                    try person.save()
                }
                return made
            }
        }
    }

    static func selects(_ statements: [String]) -> [String] {
        statements.filter { $0.uppercased().hasPrefix("SELECT") }
    }

    @Test(arguments: TestStorage.allCases) func eachAndCursorEagerLoadInBatches(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        let count = Query<EagerPerson>.preloadBatchSize + 44   // two batches
        try Self.populate(fx, groups: 7, people: count)
        let query = EagerPerson.all.order(by: "id").including(\.group)

        var viaEach: [String] = []
        let eachSQL = try fx.statements { () throws in
            try fx.run { try query.each { viaEach.append((try $0.group.get())?.name ?? "-") } }
        }
        // Per batch: the rows' SELECT is one statement, plus one SELECT of their groups.
        #expect(Self.selects(eachSQL).count == 1 + 2, "\(eachSQL)")

        var viaCursor: [String] = []
        let cursorSQL = try fx.statements { () throws in
            try fx.run {
                let cursor = try query.cursor()
                while let person = try cursor.next() { viaCursor.append((try person.group.get())?.name ?? "-") }
            }
        }
        #expect(Self.selects(cursorSQL).count == 1 + 2, "\(cursorSQL)")

        let expected = (0..<count).map { $0 % 5 == 4 ? "-" : "g\($0 % 7)" }
        #expect(viaEach == expected)
        #expect(viaCursor == expected)
    }

    @Test(arguments: TestStorage.allCases) func belongsToIsLoadedWithTwoSelects(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        try Self.populate(fx, groups: 3, people: 20)
        var people: [EagerPerson] = []
        let statements = try fx.statements { () throws in people = try EagerPerson.all.order(by: "id").including(\.group).all() }
        #expect(people.count == 20)
        #expect(Self.selects(statements).count == 2, "\(statements)")
        // The two SELECTs read one snapshot: one read transaction spans them (after the
        // configuration of a reader opened for the occasion, on a file).
        let fetch = Array(statements.drop { $0 != "BEGIN DEFERRED" })
        #expect(fetch == ["BEGIN DEFERRED"] + Self.selects(statements) + ["COMMIT"], "\(statements)")
        #expect(Self.selects(statements).last?.contains("\"eager_group\"") == true, "\(statements)")

        // Reading the preloaded relation runs no SQL.
        let reads = try fx.statements { () throws in
            for (i, person) in people.enumerated() {
                let group = try person.group.get()
                if i % 5 == 4 {
                    #expect(group == nil, "p\(i) has a NULL key")
                } else {
                    #expect(group?.name == "g\(i % 3)", "p\(i)")
                    #expect(group?.id == person.groupId)
                }
            }
        }
        #expect(reads.isEmpty, "\(reads)")

        // Without including: one SELECT per person (the N+1 the eager load avoids).
        let lazyPeople = try fx.run { () throws in try EagerPerson.all.order(by: "id").all() }
        let lazy = try fx.statements { () throws in for person in lazyPeople { _ = try person.group.get() } }
        #expect(Self.selects(lazy).count == 16)
    }

    @Test(arguments: TestStorage.allCases) func includingWorksWithFiltersOrderLimitAndTheStaticForm(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        try Self.populate(fx, groups: 3, people: 20)
        let statements = try fx.statements { () throws in
            let older = try EagerPerson.where(\.$age >= 10).where(\.$groupId != nil).order(by: \.$age, .descending)
                .limit(3).including(\.group).all()
            #expect(older.map(\.name) == ["p18", "p17", "p16"])
            #expect(try older.map { try $0.group.get()?.name } == ["g0", "g2", "g1"])
            let first = try EagerPerson.including(\.group).order(by: "id").first()
            #expect(try first?.group.get()?.name == "g0")
        }
        #expect(Self.selects(statements).count == 4, "\(statements)")
    }

    @Test(arguments: TestStorage.allCases) func hasManyFillsEachParentsChildrenWithTwoSelects(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        try Self.populate(fx, groups: 4, people: 20)
        try fx.run { () throws in
            let empty = EagerGroup(); empty.name = "empty"
            try empty.save()
        }
        var groups: [EagerGroup] = []
        let statements = try fx.statements { () throws in groups = try EagerGroup.including(\.people).order(by: "id").all() }
        #expect(groups.count == 5)
        #expect(Self.selects(statements).count == 2, "\(statements)")

        let reads = try fx.statements { () throws in
            for (g, group) in groups.prefix(4).enumerated() {
                let expected = (0..<20).filter { $0 % 4 == g && $0 % 5 != 4 }.map { "p\($0)" }
                #expect(try group.people.all().map(\.name) == expected, "g\(g)")
                #expect(try group.people.count() == expected.count)
            }
            // A parent without children gets [] (not a lazy query).
            #expect(try groups[4].people.all().isEmpty)
            #expect(try groups[4].people.count() == 0)
        }
        #expect(reads.isEmpty, "\(reads)")
    }

    @Test(arguments: TestStorage.allCases) func addingToAPreloadedHasManyIsSeenAfterwards(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        try Self.populate(fx, groups: 2, people: 4, nullEvery: 100)
        try fx.run { () throws in
            let group = try #require(try EagerGroup.including(\.people).order(by: "id").first())
            #expect(try group.people.count() == 2)
            let newcomer = EagerPerson(); newcomer.name = "new"
            try group.people.add(newcomer)
            #expect(try group.people.all().map(\.name) == ["p0", "p2", "new"])
        }
    }

    @Test(arguments: TestStorage.allCases) func hasOneIsLoadedWithTwoSelects(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        try Self.populate(fx, groups: 2, people: 6, nullEvery: 100)
        try fx.run { () throws in
            // Badges for p0 (two: the lowest id wins) and p3.
            for (label, person) in [("first", 1), ("second", 1), ("third", 4)] as [(String, Int64)] {
                let badge = EagerBadge(); badge.label = label; badge.personId = person
                try badge.save()
            }
        }
        var people: [EagerPerson] = []
        let statements = try fx.statements { () throws in people = try EagerPerson.including(\.badge).order(by: "id").all() }
        #expect(Self.selects(statements).count == 2, "\(statements)")
        let reads = try fx.statements { () throws in
            #expect(try people.map { try $0.badge.get()?.label } == ["first", nil, nil, "third", nil, nil])
        }
        #expect(reads.isEmpty, "\(reads)")

        // A has-one relation of a parent to its children: the captain is the lowest id.
        var groups: [EagerGroup] = []
        let groupStatements = try fx.statements { () throws in groups = try EagerGroup.including(\.captain).order(by: "id").all() }
        #expect(Self.selects(groupStatements).count == 2)
        let captains = try fx.statements { () throws in #expect(try groups.map { try $0.captain.get()?.name } == ["p0", "p1"]) }
        #expect(captains.isEmpty)
    }

    @Test(arguments: TestStorage.allCases) func severalRelationsCostOneSelectEach(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        try Self.populate(fx, groups: 3, people: 9)
        var people: [EagerPerson] = []
        let statements = try fx.statements { () throws in
            people = try EagerPerson.all.including(\.group).including(\.badge).all()
        }
        #expect(Self.selects(statements).count == 3, "\(statements)")
        let reads = try fx.statements { () throws in
            for person in people {
                _ = try person.group.get()
                #expect(try person.badge.get() == nil)
            }
        }
        #expect(reads.isEmpty, "\(reads)")
    }

    @Test(arguments: TestStorage.allCases) func anEmptyResultLoadsNothingElse(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        try Self.populate(fx, groups: 1, people: 1)
        let statements = try fx.statements { () throws in
            #expect(try EagerPerson.where(\.$age > 1_000).including(\.group).all().isEmpty)
            #expect(try EagerGroup.where(["name": "none"]).including(\.people).all().isEmpty)
        }
        #expect(Self.selects(statements).count == 2, "\(statements)")
    }

    @Test(arguments: TestStorage.allCases) func childrenWithOnlyNULLKeysNeedNoParentQuery(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        try Self.populate(fx, groups: 1, people: 5, nullEvery: 1)   // every key NULL
        var people: [EagerPerson] = []
        let statements = try fx.statements { () throws in people = try EagerPerson.including(\.group).all() }
        #expect(people.count == 5)
        #expect(Self.selects(statements).count <= 2, "\(statements)")
        let reads = try fx.statements { () throws in for person in people { #expect(try person.group.get() == nil) } }
        #expect(reads.isEmpty, "\(reads)")
    }

    @Test(arguments: TestStorage.allCases) func aKeyPointingAtAMissingRowIsPreloadedAsNil(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage, foreignKeys: false)
        try Self.populate(fx, groups: 2, people: 4, nullEvery: 100)
        try fx.db.execute("DELETE FROM eager_group WHERE name = 'g1'")
        let people = try fx.run { () throws in try EagerPerson.including(\.group).order(by: "id").all() }
        let reads = try fx.statements { () throws in
            #expect(try people.map { try $0.group.get()?.name } == ["g0", nil, "g0", nil])
        }
        #expect(reads.isEmpty, "\(reads)")
    }

    @Test(arguments: TestStorage.allCases) func idListsLongerThanTheVariableLimitStillTakeOneQuery(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        try Self.populate(fx, groups: 300, people: 600, nullEvery: 1_000_000)
        _ = try fx.db.withWriter { $0.setLimit(SQLITE_LIMIT_VARIABLE_NUMBER, 50) }
        var people: [EagerPerson] = []
        let statements = try fx.statements { () throws in people = try EagerPerson.including(\.group).all() }
        #expect(Self.selects(statements).count == 2, "\(statements.map { String($0.prefix(120)) })")
        #expect(try people.allSatisfy { try $0.group.get()?.id == $0.groupId })
        var groups: [EagerGroup] = []
        let hasMany = try fx.statements { () throws in groups = try EagerGroup.including(\.people).all() }
        #expect(Self.selects(hasMany).count == 2)
        #expect(try groups.allSatisfy { try $0.people.count() == 2 })
    }

    @Test(arguments: TestStorage.allCases) func twoThousandChildrenOfFifteenHundredParentsStillTakeTwoSelects(_ storage: TestStorage) throws {
        let fx = try SchemaFixture(storage)
        try Self.populate(fx, groups: 1_500, people: 2_000, nullEvery: 1_000_000)
        #expect(try count(fx.db, "SELECT count(DISTINCT groupId) FROM eager_person") == 1_500)

        var people: [EagerPerson] = []
        let statements = try fx.statements { () throws in people = try EagerPerson.including(\.group).order(by: "id").all() }
        #expect(people.count == 2_000)
        #expect(Self.selects(statements).count == 2, "\(statements.map { String($0.prefix(120)) })")
        let reads = try fx.statements { () throws in
            for (i, person) in people.enumerated() {
                let group = try person.group.get()
                if group?.name != "g\(i % 1_500)" { Issue.record("p\(i): \(String(describing: group))"); break }
            }
        }
        #expect(reads.isEmpty, "\(reads.count) statements")

        // And the other way round: 1,500 parents with their 2,000 children.
        var groups: [EagerGroup] = []
        let hasMany = try fx.statements { () throws in groups = try EagerGroup.including(\.people).order(by: "id").all() }
        #expect(Self.selects(hasMany).count == 2, "\(hasMany.map { String($0.prefix(120)) })")
        #expect(try groups.reduce(0) { $0 + (try $1.people.count()) } == 2_000)
        #expect(try groups[0].people.all().map(\.name) == ["p0", "p1500"])
        #expect(try groups[600].people.all().map(\.name) == ["p600"])
    }

    @Test func aPreloadedParentYieldsToAChangedForeignKey() throws {
        let (db, folder) = try TestStorage.file.open()
        defer { withExtendedLifetime(folder) {} }
        teamMemberDatabase.withLock { $0 = db }
        defer { teamMemberDatabase.withLock { $0 = nil } }
        try Team.createTable()
        try Member.createTable()
        let a = Team(); a.name = "A"; try a.save()
        let b = Team(); b.name = "B"; try b.save()
        let member = Member(); member.teamId = a.id; try member.save()
        let loaded = try #require(try Member.all.including(\.team).all().first)
        #expect(try loaded.team.get()?.name == "A")
        loaded.teamId = b.id
        #expect(try loaded.team.get()?.name == "B", "the key changed: the preloaded parent no longer applies")
        loaded.teamId = nil
        #expect(try loaded.team.get() == nil)
    }
}

/// The database of `EagerLoadingTests.Team` and `.Member` (aPreloadedParentYieldsToAChangedForeignKey),
/// set by that test.
private let teamMemberDatabase = Locked<Database?>(nil)

extension EagerLoadingTests {
    final class Team: ActiveObject {
        override class var database: Database? { teamMemberDatabase.withLock { $0 } }
        @Column var name = ""
    }

    final class Member: ActiveObject {
        override class var database: Database? { teamMemberDatabase.withLock { $0 } }
        @Column(references: Team.self) var teamId: Int64? = nil
        var team: BelongsTo<Team> { belongsTo(\.$teamId) }
    }
}
