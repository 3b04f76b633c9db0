import Foundation
import Testing
@testable import ActiveObjects

final class FKTeam: SchemaTestModel {
    @Column var name: String = ""
}
final class FKCascadeMember: SchemaTestModel {
    @Column var name: String = ""
    @Column(references: FKTeam.self, onDelete: .cascade) var teamId: Int64? = nil
}
final class FKSetNullMember: SchemaTestModel {
    @Column var name: String = ""
    @Column(references: FKTeam.self, onDelete: .setNull) var teamId: Int64? = nil
    var team: BelongsTo<FKTeam> { belongsTo(\.$teamId) }
}
final class FKRestrictMember: SchemaTestModel {
    @Column var name: String = ""
    @Column(references: FKTeam.self, onDelete: .restrict) var teamId: Int64? = nil
}
final class FKNoActionMember: SchemaTestModel {
    @Column var name: String = ""
    @Column(references: FKTeam.self) var teamId: Int64? = nil
}

/// A parent whose primary key is not `id`.
final class FKKeyedParent: SchemaTestModel {
    override class var primaryKey: String { "key" }
    @Column var name: String = ""
}
final class FKKeyedChild: SchemaTestModel {
    @Column(references: FKKeyedParent.self, onDelete: .cascade) var parentKey: Int64? = nil
}

/// A child table that gains a foreign-key column in its second release.
final class FKTaskV1: SchemaTestModel {
    override class var tableName: String { "fk_task" }
    @Column var title: String = ""
}
final class FKTaskV2: SchemaTestModel {
    override class var tableName: String { "fk_task" }
    @Column var title: String = ""
    @Column(references: FKTeam.self, onDelete: .setNull) var teamId: Int64? = nil
}

/// `@Column(references:onDelete:)`: real REFERENCES clauses, enforced.
@Suite struct ForeignKeyTests {
    static func setUp(_ fx: SchemaFixture) throws {
        try fx.run { () throws in
            try FKTeam.createTable()
            try FKCascadeMember.createTable()
            try FKSetNullMember.createTable()
            try FKRestrictMember.createTable()
            try FKNoActionMember.createTable()
        }
    }

    /// Two teams; `type` gets two members in the first team and one in the second.
    static func populate<M: SchemaTestModel>(_ fx: SchemaFixture, _ type: M.Type,
                                             setTeam: @escaping (M, Int64?) -> Void, setName: @escaping (M, String) -> Void) throws -> (FKTeam, FKTeam) {
        try fx.run { () throws in
            let red = FKTeam(); red.name = "Red"; try red.save()
            let blue = FKTeam(); blue.name = "Blue"; try blue.save()
            for (name, team) in [("a", red), ("b", red), ("c", blue)] {
                let member = M()
                setName(member, name); setTeam(member, team.id)
                try member.save()
            }
            return (red, blue)
        }
    }

    @Test func referencesClausesAreCreated() throws {
        let fx = try SchemaFixture()
        try Self.setUp(fx)
        try fx.run { () throws in
            try FKKeyedParent.createTable()
            try FKKeyedChild.createTable()
        }
        #expect(try foreignKeyList(fx.db, "fk_cascade_member") == [ForeignKeyShape(from: "teamId", table: "fk_team", to: "id", onDelete: "CASCADE")])
        #expect(try foreignKeyList(fx.db, "fk_set_null_member") == [ForeignKeyShape(from: "teamId", table: "fk_team", to: "id", onDelete: "SET NULL")])
        #expect(try foreignKeyList(fx.db, "fk_restrict_member") == [ForeignKeyShape(from: "teamId", table: "fk_team", to: "id", onDelete: "RESTRICT")])
        #expect(try foreignKeyList(fx.db, "fk_no_action_member") == [ForeignKeyShape(from: "teamId", table: "fk_team", to: "id", onDelete: "NO ACTION")])
        #expect(try foreignKeyList(fx.db, "fk_keyed_child") == [ForeignKeyShape(from: "parentKey", table: "fk_keyed_parent", to: "key", onDelete: "CASCADE")])
        // Foreign keys are indexed (parent deletes look children up by them).
        for table in ["fk_cascade_member", "fk_set_null_member", "fk_restrict_member", "fk_no_action_member"] {
            #expect(try indexList(fx.db, table).contains { $0.columns == ["teamId"] }, "\(table)")
        }
        #expect(try fx.db.scalar("PRAGMA foreign_keys") == 1)
    }

    @Test func cascadeDeletesTheChildren() throws {
        let fx = try SchemaFixture()
        try Self.setUp(fx)
        let (red, blue) = try Self.populate(fx, FKCascadeMember.self, setTeam: { $0.teamId = $1 }, setName: { $0.name = $1 })
        try fx.run { () throws in
            #expect(try red.delete())
            #expect(try FKCascadeMember.all.pluck(\.$name) == ["c"])
            // Also through a query delete.
            #expect(try FKTeam.where(["name": "Blue"]).delete() == 1)
            #expect(try FKCascadeMember.countAll() == 0)
        }
        #expect(blue.id != nil)
    }

    @Test func setNullClearsTheKey() throws {
        let fx = try SchemaFixture()
        try Self.setUp(fx)
        let (red, _) = try Self.populate(fx, FKSetNullMember.self, setTeam: { $0.teamId = $1 }, setName: { $0.name = $1 })
        try fx.run { () throws in
            try red.delete()
            let members = try FKSetNullMember.all.order(by: \.$name).all()
            #expect(members.map(\.name) == ["a", "b", "c"])
            #expect(members.map(\.teamId) == [nil, nil, 2])
            #expect(try members[0].team.get() == nil)
            #expect(try members[2].team.get()?.name == "Blue")
        }
    }

    @Test(arguments: ["restrict", "noAction"])
    func restrictAndNoActionRefuseTheDelete(_ kind: String) throws {
        let fx = try SchemaFixture()
        try Self.setUp(fx)
        let red: FKTeam
        let removeChildren: () throws -> Void
        if kind == "restrict" {
            red = try Self.populate(fx, FKRestrictMember.self, setTeam: { $0.teamId = $1 }, setName: { $0.name = $1 }).0
            removeChildren = { try FKRestrictMember.delete(where: ["teamId": red.id]) }
        } else {
            red = try Self.populate(fx, FKNoActionMember.self, setTeam: { $0.teamId = $1 }, setName: { $0.name = $1 }).0
            removeChildren = { try FKNoActionMember.delete(where: ["teamId": red.id]) }
        }
        let redID = red.id
        try fx.run { () throws in
            expectDatabaseError(.constraint) { _ = try red.delete() }
            #expect(red.id == redID, "a refused delete leaves the object as it was")
            #expect(try FKTeam.countAll() == 2)
            #expect(try FKTeam.where(["name": "Red"]).exists())
            expectDatabaseError(.constraint) { _ = try FKTeam.deleteAll() }
            #expect(try FKTeam.countAll() == 2)
            // Once the children are gone, the delete goes through.
            try removeChildren()
            #expect(try red.delete())
            #expect(try FKTeam.countAll() == 1)
        }
    }

    @Test func insertingAChildOfAMissingParentThrowsAndWritesNothing() throws {
        let fx = try SchemaFixture()
        try Self.setUp(fx)
        try fx.run { () throws in
            let orphan = FKCascadeMember(); orphan.name = "orphan"; orphan.teamId = 999
            let error = expectDatabaseError(.constraint) { try orphan.save() }
            #expect(error?.extendedResultCode == ResultCode(rawValue: 787), "SQLITE_CONSTRAINT_FOREIGNKEY")
            #expect(orphan.id == nil)
            #expect(orphan.hasChanges)
            #expect(try FKCascadeMember.countAll() == 0)
            #expect(!fx.db.isInTransaction)
            // The same object saves once its parent exists.
            let team = FKTeam(); team.name = "Found"; try team.save()
            orphan.teamId = team.id
            try orphan.save()
            #expect(orphan.id != nil)
            #expect(try FKCascadeMember.countAll() == 1)
        }
    }

    @Test func updatingAChildToAMissingParentThrowsAndChangesNothing() throws {
        let fx = try SchemaFixture()
        try Self.setUp(fx)
        let (red, _) = try Self.populate(fx, FKSetNullMember.self, setTeam: { $0.teamId = $1 }, setName: { $0.name = $1 })
        try fx.run { () throws in
            let member = try #require(try FKSetNullMember.findFirst(where: ["name": "a"]))
            member.teamId = 12_345
            member.name = "renamed"
            expectDatabaseError(.constraint) { try member.save() }
            #expect(member.hasChanges)
            let memberID = try #require(member.id)
            let stored = try #require(try FKSetNullMember.find(id: memberID))
            #expect(stored.teamId == red.id)
            #expect(stored.name == "a")
        }
    }

    @Test func aViolationInATransactionRollsBackTheOtherWrites() throws {
        let fx = try SchemaFixture()
        try Self.setUp(fx)
        try fx.run { () throws in
            let team = FKTeam(); team.name = "T"
            let orphan = FKCascadeMember(); orphan.name = "x"; orphan.teamId = 77
            expectDatabaseError(.constraint) {
                try fx.db.transaction {
                    try team.save()
                    try orphan.save()
                }
            }
            #expect(orphan.id == nil)
            #expect(try FKTeam.countAll() == 0)
            #expect(try FKCascadeMember.countAll() == 0)
        }
    }

    @Test func enforcementCanBeTurnedOff() throws {
        let fx = try SchemaFixture(foreignKeys: false)
        try Self.setUp(fx)
        #expect(try fx.db.scalar("PRAGMA foreign_keys") == 0)
        try fx.run { () throws in
            let orphan = FKCascadeMember(); orphan.name = "x"; orphan.teamId = 999
            try orphan.save()
            #expect(orphan.id != nil)
        }
        #expect(try fx.db.rows("PRAGMA foreign_key_check").count == 1)
    }

    @Test func aForeignKeyColumnAddedByMigrateHasItsReferencesClause() throws {
        let fx = try SchemaFixture()
        try fx.run { () throws in
            try FKTeam.createTable()
            try FKTaskV1.createTable()
            let task = FKTaskV1(); task.title = "old"; try task.save()
            try FKTaskV2.migrate()
        }
        #expect(try columnNames(fx.db, "fk_task") == ["id", "title", "teamId"])
        #expect(try foreignKeyList(fx.db, "fk_task") == [ForeignKeyShape(from: "teamId", table: "fk_team", to: "id", onDelete: "SET NULL")])
        try fx.run { () throws in
            #expect(try FKTaskV2.find(id: 1)?.teamId == nil)
            let task = FKTaskV2(); task.title = "bad"; task.teamId = 5
            expectDatabaseError(.constraint) { try task.save() }
        }
    }
}
