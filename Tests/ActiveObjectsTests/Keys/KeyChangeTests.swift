import Foundation
import Testing
@testable import ActiveObjects

/// Changing a key (API.md §12, README "Changing a key"): saving an object whose natural key
/// changed renames its row (`UPDATE … WHERE key = old`), as the foreign keys referencing it
/// allow; an integer key that is SQLite's rowid alias moves `id` with it.
@Suite struct KeyChangeTests {
    @Test func changingTheKeyOfASavedObjectRenamesItsRow() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Shop.createTables()
            let customer = try Shop.customer("ALFKI", "Alfreds")
            try Shop.customer("ANTON", "Antonio")
            let rowID = try requireID(customer)

            customer.code = "ALFRE"
            customer.name = "Alfreds F."
            #expect(customer.changedColumns == ["code", "name"])
            let (_, statements) = try recorder.recording { try customer.save() }
            #expect(writeStatements(statements) == [#"UPDATE "customers" SET "code" = ?, "name" = ? WHERE "code" = ?"#])
            #expect(try ShopCustomer.find(key: "ALFKI") == nil)
            let renamed = try #require(try ShopCustomer.find(key: "ALFRE"))
            #expect(renamed.name == "Alfreds F.")
            #expect(renamed.id == rowID)   // the same row
            #expect(try modelRowCount(db, "customers") == 2)

            // The new key is now the one the object holds.
            customer.country = "DE"
            let (_, next) = try recorder.recording { try customer.save() }
            #expect(writeStatements(next) == [#"UPDATE "customers" SET "country" = ? WHERE "code" = ?"#])
            #expect(try ShopCustomer.find(key: "ALFRE")?.country == "DE")

            // Renaming onto a key another row holds is SQLite's constraint error; nothing moves.
            customer.code = "ANTON"
            #expect(expectDatabaseError { try customer.save() }?.resultCode == .constraint)
            #expect(try ShopCustomer.find(key: "ANTON")?.name == "Antonio")
            #expect(try ShopCustomer.find(key: "ALFRE")?.name == "Alfreds F.")
            // The object still holds its row under the old key: undoing the change is no change.
            customer.code = "ALFRE"
            #expect(!customer.hasChanges)
            try customer.delete()
            #expect(try ShopCustomer.find(key: "ALFRE") == nil)
            #expect(try modelRowCount(db, "customers") == 1)
        }
    }

    @Test func aRenameRolledBackLeavesTheObjectReadyToRenameAgain() throws {
        struct Abort: Error {}
        try withModelDB { db in
            try Shop.createTables()
            let customer = try Shop.customer("ALFKI", "Alfreds")
            customer.code = "ALFRE"
            do {
                try db.transaction {
                    try customer.save()
                    #expect(try ShopCustomer.find(key: "ALFRE") != nil)
                    throw Abort()
                }
            } catch is Abort {}
            #expect(try ShopCustomer.find(key: "ALFKI") != nil)
            #expect(try ShopCustomer.find(key: "ALFRE") == nil)
            // The object still holds ALFKI's row, with the rename pending.
            #expect(customer.code == "ALFRE")
            #expect(customer.changedColumns == ["code"])
            try customer.save()
            #expect(try ShopCustomer.find(key: "ALFKI") == nil)
            #expect(try ShopCustomer.find(key: "ALFRE")?.name == "Alfreds")
        }
    }

    @Test func renamingAKeyThatRowsReferenceFollowsTheForeignKeysOnUpdate() throws {
        try withModelDB { db in
            try Shop.createTables()
            let customer = try Shop.customer("ALFKI", "Alfreds")
            let order = try Shop.order(for: "ALFKI")

            // createTable writes no ON UPDATE action (NO ACTION): a referenced key cannot move.
            customer.code = "ALFRE"
            let error = expectDatabaseError { try customer.save() }
            #expect(error?.resultCode == .constraint)
            #expect(error?.message.uppercased().contains("FOREIGN KEY") == true, "\(String(describing: error))")
            #expect(try ShopCustomer.find(key: "ALFKI") != nil)
            #expect(try ShopOrder.find(id: try requireID(order))?.customerCode == "ALFKI")
            // The failed save left the object as it was: it still names ALFKI's row.
            #expect(customer.changedColumns == ["code"])
            customer.code = "ALFKI"
            #expect(!customer.hasChanges)

            // A table whose foreign key says ON UPDATE CASCADE (written by another tool):
            // the children follow the renamed key.
            try db.execute(#"DROP TABLE "Gift Cards""#)
            try db.execute("""
                CREATE TABLE "Gift Cards" ("Card Number" TEXT PRIMARY KEY NOT NULL, "Value Cents" INTEGER NOT NULL DEFAULT 0,
                "Customer Code" TEXT REFERENCES customers(code) ON DELETE SET NULL ON UPDATE CASCADE)
                """)
            try db.execute(#"DELETE FROM orders"#)
            let card = ShopGiftCard()
            card.number = "GC-1"
            card.valueCents = 5000
            try card.customer.set(customer)
            try card.save()
            customer.code = "ALFRE"
            try customer.save()
            #expect(try ShopGiftCard.find(key: "GC-1")?.customerCode == "ALFRE")
            #expect(try customer.giftCards.count() == 1)
        }
    }

    @Test func anIntegerNaturalKeyIsTheRowidAndMovesWithIt() throws {
        try withModelDB { db in
            try Shop.createTables()
            // PRIMARY KEY ("number") on an INTEGER column is SQLite's rowid alias.
            #expect(try storedTableSQL(db, "warehouses").contains(#"PRIMARY KEY ("number")"#))
            let north = ShopWarehouse()
            north.number = 7
            north.city = "Lille"
            try north.save()
            #expect(north.id == 7)
            let south = ShopWarehouse()
            south.number = 3
            south.city = "Nice"
            try south.save()
            #expect(south.id == 3)
            #expect(try ShopWarehouse.find(key: 7)?.city == "Lille")
            #expect(try ShopWarehouse.findAll().map(\.number) == [3, 7])

            // Another new object with the default number 0, twice: the second is refused.
            let first = ShopWarehouse()
            try first.save()
            #expect(first.id == 0)
            #expect(expectDatabaseError { try ShopWarehouse().save() }?.resultCode == .constraint)

            // Renumbering renames the row; its rowid follows, and so does `id`.
            north.number = 8
            try north.save()
            #expect(try ShopWarehouse.find(key: 7) == nil)
            #expect(try ShopWarehouse.find(key: 8)?.city == "Lille")
            #expect(north.id == 8)
            #expect(try ShopWarehouse.find(id: 8)?.city == "Lille")
        }
    }

    @Test func aNaturalKeyColumnNamedIdIsTheKeyWhileIdStaysTheRowid() throws {
        /// What activeobjects-gen writes for `id UUID PRIMARY KEY`.
        final class Device: ModelTestRecord {
            override class var tableName: String { "devices" }
            override class var primaryKey: String { "id" }
            @Column("id") var uuid: UUID = UUID()
            @Column var owner: String = ""
        }
        try withModelDB { db in
            try Device.createTable()
            #expect(try storedKeyColumns(db, "devices") == ["id"])
            let phone = Device()
            phone.owner = "ann"
            try phone.save()
            let laptop = Device()
            laptop.owner = "bob"
            try laptop.save()
            #expect(phone.id == 1 && laptop.id == 2)   // rowids
            #expect(try Device.find(key: laptop.uuid)?.owner == "bob")
            #expect(try Device.find(id: 2)?.uuid == laptop.uuid)
            #expect(try Device.find(where: ["id": phone.uuid]).map(\.owner) == ["ann"])
            laptop.owner = "bea"
            try laptop.save()
            #expect(try db.scalar("SELECT owner FROM devices WHERE id = ?", [laptop.uuid]) == "bea")
        }
    }

    @Test func anIntegerKeyThatIsNotTheRowidKeepsTheRowid() throws {
        /// `INTEGER PRIMARY KEY DESC` and `INT PRIMARY KEY` are ordinary keys beside the rowid.
        final class Bin: ModelTestRecord {
            override class var tableName: String { "bins" }
            override class var primaryKey: String { "number" }
            @Column var number: Int = 0
            @Column var label: String = ""
        }
        for declaration in ["number INTEGER PRIMARY KEY DESC", "number INT PRIMARY KEY"] {
            try withModelDB { db in
                try db.execute("CREATE TABLE bins (\(declaration), label TEXT NOT NULL DEFAULT '')")
                let bin = Bin()
                bin.number = 40
                bin.label = "A"
                try bin.save()
                let rowID = try requireID(bin)
                #expect(rowID != 40, "\(declaration)")
                bin.number = 41
                try bin.save()
                #expect(bin.id == rowID, "\(declaration)")
                #expect(try Bin.find(id: rowID)?.number == 41, "\(declaration)")
            }
        }
    }
}
