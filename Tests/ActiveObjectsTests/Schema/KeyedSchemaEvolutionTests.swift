import Foundation
import Testing
@testable import ActiveObjects

// Versions of the shop's tables, as an app's models evolve.

/// order_lines, version 2: the unit price is gone, a discount arrived.
final class OrderLineV2: ModelTestRecord {
    override class var tableName: String { "order_lines" }
    override class var primaryKeys: [String] { ["order_id", "product_id"] }
    @Column("order_id", references: ShopOrder.self, onDelete: .cascade) var orderId: Int64 = 0
    @Column("product_id", references: ShopProduct.self) var productId: Int64 = 0
    @Column var quantity: Int = 1
    @Column var discount: Double = 0
}

/// order_lines keyed by the order alone: the existing lines collide.
final class OrderLineByOrder: ModelTestRecord {
    override class var tableName: String { "order_lines" }
    override class var primaryKey: String { "order_id" }
    @Column("order_id") var orderId: Int64 = 0
    @Column("product_id") var productId: Int64 = 0
    @Column var quantity: Int = 1
}

/// stock, version 2 (still WITHOUT ROWID): `on_hand` becomes optional, a location arrives.
final class StockV2: ModelTestRecord {
    override class var tableName: String { "stock" }
    override class var primaryKey: String { "sku" }
    override class var withoutRowID: Bool { true }
    @Column var sku: String = ""
    @Column("on_hand") var onHand: Int? = nil
    @Column var location: String = "main"
}

/// customers, the first version: a natural key, on a rowid table.
final class CustomerV1: ModelTestRecord {
    override class var tableName: String { "customers" }
    override class var primaryKey: String { "code" }
    @Column var code: String = ""
    @Column var name: String = ""
    @Column var fax: String? = nil
}

/// customers without fax, not declaring a layout.
final class CustomerPlain: ModelTestRecord {
    override class var tableName: String { "customers" }
    override class var primaryKey: String { "code" }
    @Column var code: String = ""
    @Column var name: String = ""
}

/// customers, later: fax is gone, and the table becomes WITHOUT ROWID.
final class CustomerWithoutRowID: ModelTestRecord {
    override class var tableName: String { "customers" }
    override class var primaryKey: String { "code" }
    override class var withoutRowID: Bool { true }
    @Column var code: String = ""
    @Column var name: String = ""
}

/// customers, with a column added (no rebuild needed).
final class CustomerWithPhone: ModelTestRecord {
    override class var tableName: String { "customers" }
    override class var primaryKey: String { "code" }
    @Column var code: String = ""
    @Column var name: String = ""
    @Column var fax: String? = nil
    @Column var phone: String = ""
}

/// The audit log with a column that is dropped later.
final class AuditLogV1: ModelTestRecord {
    override class var tableName: String { "audit_log" }
    override class var primaryKey: String { "rowid" }
    @Column var action: String = ""
    @Column var host: String? = nil
}

final class AuditLogV2: ModelTestRecord {
    override class var tableName: String { "audit_log" }
    override class var primaryKey: String { "rowid" }
    @Column var action: String = ""
}

/// `createTable`/`migrate` and `migrate(rebuildingTable:)` on natural, composite, WITHOUT ROWID
/// and keyless tables: the key, the layout and every row survive.
@Suite struct KeyedSchemaEvolutionTests {
    @Test func addingAColumnToANaturalKeyTableKeepsTheKeyAndTheRows() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try CustomerV1.createTable()
            for (code, name) in [("ALFKI", "Alfreds"), ("ANTON", "Antonio")] {
                let customer = CustomerV1()
                customer.code = code
                customer.name = name
                try customer.save()
            }
            recorder.reset()
            try CustomerWithPhone.migrate()
            #expect(recorder.statements.contains(#"ALTER TABLE "customers" ADD COLUMN "phone" TEXT NOT NULL DEFAULT ''"#))
            #expect(try storedKeyColumns(db, "customers") == ["code"])
            let anton = try #require(try CustomerWithPhone.find(key: "ANTON"))
            #expect(anton.name == "Antonio" && anton.phone == "")
            anton.phone = "555"
            try anton.save()
            #expect(try CustomerV1.find(key: "ANTON")?.name == "Antonio")
        }
    }

    @Test func aRebuildKeepsTheCompositeKeyTheRowsAndTheirRowids() throws {
        try withModelDB { db in
            try Shop.createTables()
            let chai = try Shop.product("CHAI", "Chai", cents: 1800)
            let chang = try Shop.product("CHANG", "Chang", cents: 1900)
            let order = try Shop.order(for: nil)
            let a = try Shop.line(order, chai, quantity: 2)
            let b = try Shop.line(order, chang, quantity: 5)
            let rowIDs = [a.id, b.id]

            try OrderLineV2.migrate(rebuildingTable: true)
            #expect(try modelTableColumns(db, "order_lines") == ["order_id", "product_id", "quantity", "discount"])
            #expect(try storedKeyColumns(db, "order_lines") == ["order_id", "product_id"])
            #expect(try storedTableSQL(db, "order_lines").contains(#"PRIMARY KEY ("order_id", "product_id")"#))
            let foreignKeys = try db.rows("SELECT \"table\" FROM pragma_foreign_key_list('order_lines') ORDER BY \"table\"")
                .map { try $0[0] as String }
            #expect(foreignKeys == ["orders", "products"])
            let lines = try OrderLineV2.all.order(by: "product_id").all()
            #expect(lines.map(\.quantity) == [2, 5])
            #expect(lines.map(\.id) == rowIDs)
            // The composite key still holds.
            let duplicate = OrderLineV2()
            duplicate.orderId = try requireID(order)
            duplicate.productId = try requireID(chai)
            #expect(expectDatabaseError { try duplicate.save() }?.resultCode == .constraint)
            #expect(try OrderLineV2.find(key: ["order_id": try requireID(order), "product_id": try requireID(chang)])?.quantity == 5)
            // Idempotent: a second migrate changes nothing.
            let before = try storedTableSQL(db, "order_lines")
            try OrderLineV2.migrate(rebuildingTable: true)
            #expect(try storedTableSQL(db, "order_lines") == before)
        }
    }

    @Test func aRebuildThatWouldMergeRowsChangesNothing() throws {
        try withModelDB { db in
            try Shop.createTables()
            let order = try Shop.order(for: nil)
            try Shop.line(order, try Shop.product("CHAI", "Chai", cents: 1), quantity: 2)
            try Shop.line(order, try Shop.product("CHANG", "Chang", cents: 1), quantity: 5)
            let before = try storedTableSQL(db, "order_lines")
            // Keyed by the order alone, the two lines collide.
            #expect(expectDatabaseError { try OrderLineByOrder.migrate(rebuildingTable: true) }?.resultCode == .constraint)
            #expect(try storedTableSQL(db, "order_lines") == before)
            #expect(try modelRowCount(db, "order_lines") == 2)
            #expect(try storedKeyColumns(db, "order_lines") == ["order_id", "product_id"])
        }
    }

    @Test func aRebuildKeepsWithoutRowID() throws {
        try withModelDB { db in
            try ShopStock.createTable()
            for (sku, count) in [("CHAI", 39), ("CHANG", 17)] {
                let stock = ShopStock()
                stock.sku = sku
                stock.onHand = count
                try stock.save()
            }
            try StockV2.migrate(rebuildingTable: true)
            #expect(try isWithoutRowID(db, "stock"))
            #expect(try storedKeyColumns(db, "stock") == ["sku"])
            #expect(try modelTableColumns(db, "stock") == ["sku", "on_hand", "location"])
            let chai = try #require(try StockV2.find(key: "CHAI"))
            #expect(chai.onHand == 39 && chai.location == "main" && chai.id == nil)
            #expect(try StockV2.all.order(by: "sku").all().map(\.onHand) == [39, 17])
        }
    }

    @Test func aModelThatNowDeclaresWithoutRowIDConvertsTheTable() throws {
        try withModelFileDB { db, _ in
            try CustomerV1.createTable()
            for (code, name) in [("ALFKI", "Alfreds"), ("ANTON", "Antonio")] {
                let customer = CustomerV1()
                customer.code = code
                customer.name = name
                try customer.save()
            }
            // A model that does not declare the layout has used the table (and learned that it
            // has a rowid).
            #expect(try CustomerPlain.find(key: "ALFKI")?.id != nil)

            try CustomerWithoutRowID.migrate(rebuildingTable: true)
            #expect(try isWithoutRowID(db, "customers"))
            #expect(try storedKeyColumns(db, "customers") == ["code"])
            #expect(try CustomerWithoutRowID.find(key: "ANTON")?.name == "Antonio")

            // A model that does not declare it keeps working on the converted table.
            let alfki = try #require(try CustomerPlain.find(key: "ALFKI"))
            #expect(alfki.id == nil)
            alfki.name = "Alfreds Futterkiste"
            try alfki.save()
            let bergs = CustomerPlain()
            bergs.code = "BERGS"
            try bergs.save()
            #expect(bergs.id == nil)
            #expect(try CustomerWithoutRowID.all.order(by: "code").all().map(\.name) == ["Alfreds Futterkiste", "Antonio", ""])
        }
    }

    @Test func aRebuildOfAKeylessTableKeepsItsRowids() throws {
        try withModelDB { db in
            try AuditLogV1.createTable()
            for action in ["login", "sync", "logout"] {
                let entry = AuditLogV1()
                entry.action = action
                entry.host = "mac"
                try entry.save()
            }
            try db.execute("DELETE FROM audit_log WHERE action = 'sync'")   // a gap: rowids 1 and 3
            try AuditLogV2.migrate(rebuildingTable: true)
            #expect(try modelTableColumns(db, "audit_log") == ["action"])
            #expect(try AuditLogV2.findAll().map(\.id) == [1, 3])
            #expect(try AuditLogV2.find(id: 3)?.action == "logout")
        }
    }

    @Test func keyedModelsInAVersionedMigration() throws {
        try withModelDB { db in
            var migrator = Migrator()
            migrator.register("001-shop") { db in
                try ShopCustomer.createTable(in: db)
                try ShopOrder.createTable(in: db)
                try ShopProduct.createTable(in: db)
                try ShopOrderLine.createTable(in: db)
                try ShopStock.createTable(in: db)
            }
            migrator.register("002-lines") { db in try OrderLineV2.migrate(in: db, rebuildingTable: true) }
            try migrator.migrate(db)
            #expect(try migrator.appliedMigrations(db) == ["001-shop", "002-lines"])
            #expect(try storedKeyColumns(db, "order_lines") == ["order_id", "product_id"])
            #expect(try modelTableColumns(db, "order_lines").contains("discount"))
            #expect(try isWithoutRowID(db, "stock"))
        }
    }
}
