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
                CREATE TABLE IF NOT EXISTS "customers" ("code" TEXT NOT NULL, "name" TEXT NOT NULL DEFAULT '', \
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
