import Foundation
import Testing
@testable import ActiveObjects

/// Tables without a declared key (API.md §12), mapped by their rowid with
/// `primaryKey = "rowid"`: `id` is the hidden rowid, and every write names the row by it.
@Suite struct KeylessTableTests {
    static let noon = Date(timeIntervalSince1970: 1_700_000_000)

    @discardableResult
    static func log(_ action: String, by actor: String? = nil) throws -> ShopAuditLog {
        let entry = ShopAuditLog()
        entry.at = noon
        entry.actor = actor
        entry.action = action
        try entry.save()
        return entry
    }

    @Test func createTableDeclaresNoKeyColumn() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try ShopAuditLog.createTable()
            let create = try #require(recorder.statements.first { $0.hasPrefix("CREATE TABLE") })
            #expect(create.hasPrefix(#"CREATE TABLE IF NOT EXISTS "audit_log" ("at" TEXT NOT NULL DEFAULT "#), "\(create)")
            #expect(!create.contains("PRIMARY KEY"))
            #expect(!create.lowercased().contains("rowid"))
            #expect(try modelTableColumns(db, "audit_log") == ["at", "actor", "action"])
            #expect(try storedKeyColumns(db, "audit_log").isEmpty)
        }
    }

    @Test func rowsAreSavedFoundAndDeletedByRowid() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try ShopAuditLog.createTable()
            let login = try Self.log("login", by: "ann")
            let order = try Self.log("order", by: "ann")
            try Self.log("logout")
            #expect(login.id == 1 && order.id == 2)
            #expect(try db.scalar("SELECT action FROM audit_log WHERE rowid = ?", [try requireID(order)]) == "order")

            order.action = "order #10248"
            let (_, statements) = try recorder.recording { try order.save() }
            #expect(writeStatements(statements) == [#"UPDATE "audit_log" SET "action" = ? WHERE "rowid" = ?"#])
            #expect(try ShopAuditLog.find(id: 2)?.action == "order #10248")
            #expect(try ShopAuditLog.find(key: Int64(2))?.action == "order #10248")
            #expect(try ShopAuditLog.findAll().map(\.action) == ["login", "order #10248", "logout"])
            #expect(try ShopAuditLog.where(["actor": nil]).all().map(\.id) == [3])

            let copy = ShopAuditLog()
            copy.id = 1
            try copy.reload()
            #expect(copy.action == "login" && copy.actor == "ann")
            #expect(try login.delete())
            #expect(try ShopAuditLog.find(id: 1) == nil)
            #expect(try modelRowCount(db, "audit_log") == 2)
            // A deleted entry saved again comes back under its rowid.
            try login.save()
            #expect(try ShopAuditLog.find(id: 1)?.action == "login")
        }
    }

    @Test func aKeylessTableWrittenByAnotherToolMapsByRowid() throws {
        try withModelFileDB { db, _ in
            try db.execute("CREATE TABLE audit_log (at TEXT NOT NULL, actor TEXT, action TEXT NOT NULL)")
            try db.execute("""
                INSERT INTO audit_log VALUES ('2024-01-02 10:00:00.000', 'bob', 'login'),
                ('2024-01-02 10:05:00.000', NULL, 'sync'), ('2024-01-02 10:09:00.000', 'bob', 'logout')
                """)
            try ShopAuditLog.migrate()   // nothing to add
            #expect(try modelTableColumns(db, "audit_log") == ["at", "actor", "action"])
            let all = try ShopAuditLog.findAll()
            #expect(all.map(\.id) == [1, 2, 3])
            #expect(all.map(\.action) == ["login", "sync", "logout"])
            let sync = all[1]
            sync.actor = "cron"
            try sync.save()
            #expect(try db.scalar("SELECT actor FROM audit_log WHERE rowid = 2") == "cron")
            #expect(try db.scalar("SELECT actor FROM audit_log WHERE rowid = 1") == "bob")

            // Rows read without their rowid name no row: saving them is refused, not duplicated.
            let raw = try ShopAuditLog.fetch(sql: "SELECT * FROM audit_log ORDER BY rowid")
            #expect(raw.allSatisfy { $0.id == nil })
            raw[0].action = "changed"
            let error = expectActiveObjectError { try raw[0].save() }
            if case .misuse? = error {} else { Issue.record("expected misuse, got \(String(describing: error))") }
            #expect(try modelRowCount(db, "audit_log") == 3)
            // …and with it, they do.
            let withRowID = try ShopAuditLog.fetch(sql: "SELECT rowid, * FROM audit_log WHERE actor = ?", ["bob"])
            #expect(withRowID.map(\.id) == [1, 3])
            withRowID[1].action = "logout (timeout)"
            try withRowID[1].save()
            #expect(try db.scalar("SELECT action FROM audit_log WHERE rowid = 3") == "logout (timeout)")
        }
    }

    @Test func aHiddenRowidCannotBeReferenced() throws {
        final class LogComment: ModelTestRecord {
            @Column(references: ShopAuditLog.self) var entryId: Int64? = nil
            var entry: BelongsTo<ShopAuditLog> { belongsTo(\.$entryId) }
        }
        try withModelDB { _ in
            try ShopAuditLog.createTable()
            let error = expectActiveObjectError { try LogComment.createTable() }
            #expect(error?.isInvalidModel == true)
            let comment = LogComment()
            comment.entryId = 1
            #expect(expectActiveObjectError { _ = try comment.entry.get() }?.isInvalidModel == true)
        }
    }
}
