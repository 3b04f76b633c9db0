import Foundation
import Testing
@testable import ActiveObjects

/// Natural keys (API.md §12): `primaryKey` names a `@Column` of any storable type — a TEXT
/// customer code, a UUID, an integer numbered by hand. Rows are found, saved, upserted,
/// updated, deleted and reloaded by that key; `id` stays the rowid.
@Suite struct NaturalKeyTests {
    // MARK: DDL

    @Test func createTableDeclaresTheNaturalKeyAsPrimaryKey() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try ShopCustomer.createTable()
            let create = try #require(recorder.statements.first { $0.hasPrefix("CREATE TABLE") })
            #expect(create == """
                CREATE TABLE IF NOT EXISTS "customers" ("code" TEXT NOT NULL DEFAULT '', "name" TEXT NOT NULL DEFAULT '', \
                "email" TEXT DEFAULT NULL, "country" TEXT NOT NULL DEFAULT 'FR', PRIMARY KEY ("code"))
                """)
            #expect(try storedKeyColumns(db, "customers") == ["code"])
            #expect(try !isWithoutRowID(db, "customers"))

            try ShopPayment.createTable()
            let payments = try storedTableSQL(db, "payments")
            #expect(payments.contains("\"payment_id\" TEXT NOT NULL"))
            #expect(payments.contains("PRIMARY KEY (\"payment_id\")"))
            #expect(!payments.contains("INTEGER PRIMARY KEY"))

            try ShopGiftCard.createTable()
            #expect(try storedKeyColumns(db, "Gift Cards") == ["Card Number"])
        }
    }

    // MARK: save, find

    @Test func saveInsertsThenUpdatesByTheKey() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Shop.createTables()
            let alfki = ShopCustomer()
            alfki.code = "ALFKI"
            alfki.name = "Alfreds Futterkiste"
            let (_, inserted) = try recorder.recording { try alfki.save() }
            #expect(writeStatements(inserted) == [#"INSERT INTO "customers" ("code", "name", "email", "country") VALUES (?, ?, ?, ?)"#])
            // `id` is the row's rowid.
            let rowID: Int64? = try db.scalar("SELECT rowid FROM customers WHERE code = 'ALFKI'")
            #expect(alfki.id != nil)
            #expect(alfki.id == rowID)
            #expect(!alfki.hasChanges)

            alfki.name = "Alfreds"
            let (_, updated) = try recorder.recording { try alfki.save() }
            #expect(writeStatements(updated) == [#"UPDATE "customers" SET "name" = ? WHERE "code" = ?"#])
            #expect(try db.scalar("SELECT name FROM customers WHERE code = 'ALFKI'") == "Alfreds")

            // Nothing changed: no SQL at all.
            let (_, idle) = try recorder.recording { try alfki.save() }
            #expect(writeStatements(idle).isEmpty)

            // A second new object with the same code is a new row: the key is taken.
            let twin = ShopCustomer()
            twin.code = "ALFKI"
            twin.name = "Twin"
            let error = expectDatabaseError { try twin.save() }
            #expect(error?.resultCode == .constraint)
            #expect(twin.id == nil)
            #expect(try modelRowCount(db, "customers") == 1)
        }
    }

    @Test func findByKeyReturnsTheRowOrNil() throws {
        try withModelDB { db in
            try Shop.createTables()
            try Shop.customer("ALFKI", "Alfreds")
            let anton = try Shop.customer("ANTON", "Antonio")
            let found = try #require(try ShopCustomer.find(key: "ANTON"))
            #expect(found.name == "Antonio")
            #expect(found.id == anton.id)
            #expect(!found.hasChanges)
            #expect(try ShopCustomer.find(key: "NOBODY") == nil)
            // Case matters, as in SQLite's BINARY collation.
            #expect(try ShopCustomer.find(key: "anton") == nil)
            // The dictionary form, by property or column name.
            #expect(try ShopCustomer.find(key: ["code": "ALFKI"])?.name == "Alfreds")
            // find(id:) still finds by rowid.
            #expect(try ShopCustomer.find(id: try requireID(anton))?.code == "ANTON")
            // A rowid model's key is its id.
            let chai = try Shop.product("CHAI", "Chai", cents: 1800)
            #expect(try ShopProduct.find(key: try requireID(chai))?.sku == "CHAI")
            _ = db
        }
    }

    @Test func uuidKeysAreStoredAsTextAndFound() throws {
        try withModelDB { db in
            try Shop.createTables()
            let order = try Shop.order(for: nil)
            let payment = ShopPayment()
            let key = UUID()
            payment.paymentId = key
            payment.orderId = try requireID(order)
            payment.amountCents = 4200
            try payment.save()
            #expect(try db.scalar("SELECT payment_id FROM payments") == key.uuidString.lowercased())
            let rowID: Int64? = try db.scalar("SELECT rowid FROM payments")
            #expect(payment.id == rowID)
            let found = try #require(try ShopPayment.find(key: key))
            #expect(found.amountCents == 4200)
            #expect(found.paymentId == key)
            #expect(try ShopPayment.find(key: UUID()) == nil)

            found.amountCents = 4300
            try found.save()
            #expect(try ShopPayment.find(key: key)?.amountCents == 4300)
            #expect(try found.delete())
            #expect(try ShopPayment.countAll() == 0)
        }
    }

    @Test func findByKeyAsync() async throws {
        try await withTimeout(30) {
            try await withAsyncModelDB { _ in
                try Shop.createTables()
                try Shop.customer("BLAUS", "Blauer See")
                let found = try await ShopCustomer.find(key: "BLAUS")
                #expect(found?.name == "Blauer See")
                #expect(try await ShopCustomer.find(key: "NOBODY") == nil)
                let byDictionary = try await ShopCustomer.find(key: ["code": "BLAUS"])
                #expect(byDictionary?.name == "Blauer See")
                // Async writes by key.
                let customer = try #require(found)
                customer.name = "Blauer See Delikatessen"
                try await customer.save()
                #expect(try await ShopCustomer.find(key: "BLAUS")?.name == "Blauer See Delikatessen")
                customer.code = "BLAUX"
                try await customer.save()
                #expect(try await ShopCustomer.find(key: "BLAUS") == nil)
                try await customer.reload()
                #expect(customer.code == "BLAUX")
                #expect(try await customer.delete())
                #expect(try await ShopCustomer.countAll() == 0)
            }
        }
    }

    // MARK: upsert

    @Test func upsertConflictsOnTheNaturalKey() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Shop.createTables()
            let original = try Shop.customer("ALFKI", "Alfreds", email: "a@example.com")

            let incoming = ShopCustomer()
            incoming.code = "ALFKI"
            incoming.name = "Alfreds Futterkiste"
            incoming.country = "DE"
            let (_, statements) = try recorder.recording { try incoming.upsert() }
            let upsert = try #require(writeStatements(statements).first)
            #expect(upsert.contains(#"ON CONFLICT("code") DO UPDATE SET"#), "\(upsert)")
            #expect(!upsert.uppercased().contains("REPLACE"))
            #expect(try modelRowCount(db, "customers") == 1)
            let row = try #require(try ShopCustomer.find(key: "ALFKI"))
            #expect(row.name == "Alfreds Futterkiste")
            #expect(row.country == "DE")
            #expect(row.email == nil)   // every column is the incoming object's
            // The object now holds the existing row: same rowid, later saves update it.
            #expect(incoming.id == original.id)
            #expect(!incoming.hasChanges)
            incoming.name = "AF"
            let (_, update) = try recorder.recording { try incoming.save() }
            #expect(writeStatements(update).first?.hasPrefix("UPDATE") == true)
            #expect(try ShopCustomer.find(key: "ALFKI")?.name == "AF")

            // No conflict: a new row.
            let other = ShopCustomer()
            other.code = "BERGS"
            other.name = "Berglunds"
            try other.upsert()
            #expect(try modelRowCount(db, "customers") == 2)
            #expect(other.id != nil && other.id != original.id)
        }
    }

    // MARK: update, delete, reload by key

    @Test func anObjectHoldingOnlyAKeyUpdatesDeletesAndReloadsThatRow() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Shop.createTables()
            try Shop.customer("ALFKI", "Alfreds")
            try Shop.customer("ANTON", "Antonio")

            // reload() of a new object reads the row its key names.
            let probe = ShopCustomer()
            probe.code = "ANTON"
            try probe.reload()
            #expect(probe.name == "Antonio")
            #expect(probe.id != nil)

            // update() of a new object writes every column to the row with its key.
            let replacement = ShopCustomer()
            replacement.code = "ALFKI"
            replacement.name = "Replaced"
            let (_, statements) = try recorder.recording { try replacement.update() }
            let update = try #require(writeStatements(statements).first)
            #expect(update.hasSuffix(#"WHERE "code" = ?"#), "\(update)")
            #expect(try ShopCustomer.find(key: "ALFKI")?.name == "Replaced")
            #expect(try ShopCustomer.find(key: "ANTON")?.name == "Antonio")

            // A key naming no row.
            let ghost = ShopCustomer()
            ghost.code = "GHOST"
            #expect(expectActiveObjectError { try ghost.update() }?.isRecordNotFound == true)
            #expect(expectActiveObjectError { try ghost.reload() }?.isRecordNotFound == true)
            #expect(try ghost.delete() == false)

            // delete() by key removes that row only.
            let doomed = ShopCustomer()
            doomed.code = "ANTON"
            #expect(try doomed.delete())
            #expect(try ShopCustomer.find(key: "ANTON") == nil)
            #expect(try modelRowCount(db, "customers") == 1)
            // A deleted object's save() puts its row back.
            doomed.name = "Antonio again"
            try doomed.save()
            #expect(try ShopCustomer.find(key: "ANTON")?.name == "Antonio again")
        }
    }

    @Test func reloadDiscardsUnsavedChangesToTheKey() throws {
        try withModelDB { _ in
            try Shop.createTables()
            let alfki = try Shop.customer("ALFKI", "Alfreds")
            alfki.code = "ZZZZZ"
            alfki.name = "Unsaved"
            try alfki.reload()   // reads the row it holds, not the row "ZZZZZ"
            #expect(alfki.code == "ALFKI")
            #expect(alfki.name == "Alfreds")
            #expect(!alfki.hasChanges)
        }
    }

    // MARK: changing the key

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

    @Test func rowsFetchedWithTheirKeyButWithoutRowidStillNameTheirRow() throws {
        try withModelDB { db in
            try Shop.createTables()
            try Shop.customer("ALFKI", "Alfreds")
            let fetched = try ShopCustomer.fetch(sql: "SELECT code, name FROM customers")
            #expect(fetched.count == 1)
            let alfki = fetched[0]
            #expect(alfki.id == nil)   // no rowid in the result…
            alfki.name = "Alfreds F."
            try alfki.save()           // …but the key names the row.
            #expect(try modelRowCount(db, "customers") == 1)
            #expect(try ShopCustomer.find(key: "ALFKI")?.name == "Alfreds F.")
            // Without the key, no row is named: refused rather than inserted twice.
            let card = ShopGiftCard()
            card.number = "GC-1"
            try card.save()
            let keyless = try ShopGiftCard.fetch(sql: #"SELECT "Value Cents" FROM "Gift Cards""#)[0]
            keyless.valueCents = 100
            let error = expectActiveObjectError { try keyless.save() }
            if case .misuse? = error {} else { Issue.record("expected misuse, got \(String(describing: error))") }
            #expect(try modelRowCount(db, "Gift Cards") == 1)
            #expect(try ShopGiftCard.find(key: "GC-1")?.valueCents == 0)
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

    @Test func invalidKeyDeclarationsAreClearErrors() throws {
        final class TwoKeysNoColumns: ModelTestRecord {
            override class var primaryKeys: [String] { ["a", "b"] }
            @Column var a: Int = 0
        }
        final class EmptyKeys: ModelTestRecord {
            override class var primaryKeys: [String] { [] }
            @Column var a: Int = 0
        }
        final class RepeatedKey: ModelTestRecord {
            override class var primaryKeys: [String] { ["a", "A"] }
            @Column var a: Int = 0
        }
        try withModelDB { _ in
            let missing = expectActiveObjectError { try TwoKeysNoColumns.createTable() }
            #expect(missing?.isInvalidModel == true)
            #expect("\(missing.map { "\($0)" } ?? "")".contains("\"b\""))
            #expect(expectActiveObjectError { try EmptyKeys.createTable() }?.isInvalidModel == true)
            #expect(expectActiveObjectError { try RepeatedKey.createTable() }?.isInvalidModel == true)
        }
    }
}
