import Foundation
import Testing
@testable import ActiveObjects

/// Composite keys (API.md §12): `primaryKeys` names several `@Column`s; the table is created
/// with `PRIMARY KEY (a, b)`; rows are found with `find(key: [column: value])` and saved,
/// updated, deleted and reloaded by all their key columns.
@Suite struct CompositeKeyTests {
    /// Two orders; order 1 has CHAI ×2 and CHANG ×5, order 2 has CHAI ×1.
    struct Lines {
        let first: ShopOrder, second: ShopOrder
        let chai: ShopProduct, chang: ShopProduct
    }

    static func makeLines() throws -> Lines {
        try Shop.createTables()
        try Shop.customer("ALFKI", "Alfreds")
        let chai = try Shop.product("CHAI", "Chai", cents: 1800)
        let chang = try Shop.product("CHANG", "Chang", cents: 1900)
        let first = try Shop.order(for: "ALFKI")
        let second = try Shop.order(for: "ALFKI")
        try Shop.line(first, chai, quantity: 2)
        try Shop.line(first, chang, quantity: 5)
        try Shop.line(second, chai, quantity: 1)
        return Lines(first: first, second: second, chai: chai, chang: chang)
    }

    @Test func createTableDeclaresTheCompositeKey() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            #expect(ShopOrderLine.primaryKeys == ["order_id", "product_id"])
            try ShopOrder.createTable()
            try ShopProduct.createTable()
            recorder.reset()
            try ShopOrderLine.createTable()
            let create = try #require(recorder.statements.first { $0.hasPrefix("CREATE TABLE") })
            #expect(create == """
                CREATE TABLE IF NOT EXISTS "order_lines" (\
                "order_id" INTEGER NOT NULL REFERENCES "orders"("id") ON DELETE CASCADE, \
                "product_id" INTEGER NOT NULL REFERENCES "products"("id") ON DELETE NO ACTION, \
                "quantity" INTEGER NOT NULL DEFAULT 1, "unit_price_cents" INTEGER NOT NULL DEFAULT 0, \
                PRIMARY KEY ("order_id", "product_id"))
                """)
            #expect(try storedKeyColumns(db, "order_lines") == ["order_id", "product_id"])
            #expect(try !isWithoutRowID(db, "order_lines"))
            // Idempotent.
            try ShopOrderLine.createTable()
            #expect(try storedKeyColumns(db, "order_lines") == ["order_id", "product_id"])
        }
    }

    @Test func findByKeyNeedsExactlyTheKeyColumns() throws {
        try withModelDB { _ in
            let lines = try Self.makeLines()
            let firstID = try requireID(lines.first), chaiID = try requireID(lines.chai)
            let line = try #require(try ShopOrderLine.find(key: ["order_id": firstID, "product_id": chaiID]))
            #expect(line.quantity == 2)
            #expect(line.id != nil)   // order_lines has a rowid
            // Property names work too, and may be mixed with column names.
            #expect(try ShopOrderLine.find(key: ["orderId": firstID, "productId": try requireID(lines.chang)])?.quantity == 5)
            #expect(try ShopOrderLine.find(key: ["orderId": try requireID(lines.second), "product_id": chaiID])?.quantity == 1)
            #expect(try ShopOrderLine.find(key: ["order_id": try requireID(lines.second), "product_id": try requireID(lines.chang)]) == nil)

            // A missing key column.
            let missing = expectActiveObjectError { _ = try ShopOrderLine.find(key: ["order_id": firstID]) }
            guard case .invalidArgument(let reason)? = missing else {
                Issue.record("expected invalidArgument, got \(String(describing: missing))"); return
            }
            #expect(reason.contains("order_id") && reason.contains("product_id"), "\(reason)")
            // An extra column that is not part of the key.
            let extra = expectActiveObjectError {
                _ = try ShopOrderLine.find(key: ["order_id": firstID, "product_id": chaiID, "quantity": 2])
            }
            guard case .invalidArgument(let extraReason)? = extra else {
                Issue.record("expected invalidArgument, got \(String(describing: extra))"); return
            }
            #expect(extraReason.contains("quantity"), "\(extraReason)")
            // The same key column twice, under its property and its column name.
            let twice = expectActiveObjectError { _ = try ShopOrderLine.find(key: ["order_id": firstID, "orderId": firstID]) }
            if case .invalidArgument? = twice {} else { Issue.record("expected invalidArgument, got \(String(describing: twice))") }
            // A name the model does not have.
            let unknown = expectActiveObjectError { _ = try ShopOrderLine.find(key: ["order_id": firstID, "sku": "CHAI"]) }
            if case .unknownColumn(_, let column)? = unknown { #expect(column == "sku") } else {
                Issue.record("expected unknownColumn, got \(String(describing: unknown))")
            }
            // The one-value form is for single-column keys.
            let single = expectActiveObjectError { _ = try ShopOrderLine.find(key: firstID) }
            guard case .invalidArgument(let singleReason)? = single else {
                Issue.record("expected invalidArgument, got \(String(describing: single))"); return
            }
            #expect(singleReason.contains("composite"), "\(singleReason)")
            // …and for a single-column key the dictionary must name that column.
            #expect(try ShopCustomer.find(key: ["code": "ALFKI"]) != nil)
            if case .invalidArgument? = expectActiveObjectError({ _ = try ShopCustomer.find(key: ["name": "Alfreds"]) }) {} else {
                Issue.record("find(key:) by a non-key column must be refused")
            }
        }
    }

    @Test func findByCompositeKeyAsync() async throws {
        try await withTimeout(30) {
            try await withAsyncModelDB { _ in
                let lines = try Self.makeLines()
                let key: [String: Any?] = ["order_id": try requireID(lines.first), "product_id": try requireID(lines.chang)]
                #expect(try await ShopOrderLine.find(key: key)?.quantity == 5)
                await #expect(throws: ActiveObjectError.self) {
                    _ = try await ShopOrderLine.find(key: ["order_id": 1])
                }
            }
        }
    }

    @Test func saveUpdateAndDeleteByAllKeyColumns() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            let lines = try Self.makeLines()
            let firstID = try requireID(lines.first), chaiID = try requireID(lines.chai)
            let line = try #require(try ShopOrderLine.find(key: ["order_id": firstID, "product_id": chaiID]))

            line.quantity = 3
            let (_, update) = try recorder.recording { try line.save() }
            #expect(writeStatements(update) == [#"UPDATE "order_lines" SET "quantity" = ? WHERE "order_id" = ? AND "product_id" = ?"#])
            // Only that line changed: the same product in the other order did not.
            let quantities = try db.rows("SELECT order_id, product_id, quantity FROM order_lines ORDER BY order_id, product_id")
                .map { [try $0[0] as Int64, try $0[1] as Int64, try $0[2] as Int64] }
            #expect(quantities == [[firstID, chaiID, 3], [firstID, try requireID(lines.chang), 5], [try requireID(lines.second), chaiID, 1]])

            // update() and reload() of an object that only holds the key.
            let other = ShopOrderLine()
            other.orderId = try requireID(lines.second)
            other.productId = chaiID
            try other.reload()
            #expect(other.quantity == 1)
            other.quantity = 9
            try other.update()
            #expect(try ShopOrderLine.find(key: ["order_id": try requireID(lines.second), "product_id": chaiID])?.quantity == 9)

            // The same key twice is SQLite's constraint error.
            let duplicate = ShopOrderLine()
            duplicate.orderId = firstID
            duplicate.productId = chaiID
            #expect(expectDatabaseError { try duplicate.save() }?.resultCode == .constraint)

            // delete() removes that line only.
            let (deleted, statements) = try recorder.recording { try line.delete() }
            #expect(deleted)
            #expect(writeStatements(statements) == [#"DELETE FROM "order_lines" WHERE "order_id" = ? AND "product_id" = ?"#])
            #expect(try modelRowCount(db, "order_lines") == 2)
            #expect(try lines.first.lines.count() == 1)
            #expect(try lines.second.lines.count() == 1)
        }
    }

    @Test func changingAKeyColumnMovesTheLine() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            let lines = try Self.makeLines()
            let secondID = try requireID(lines.second)
            let line = try #require(try ShopOrderLine.find(key: ["order_id": secondID, "product_id": try requireID(lines.chai)]))
            let rowID = try requireID(line)
            // The customer wanted Chang, not Chai.
            line.productId = try requireID(lines.chang)
            let (_, statements) = try recorder.recording { try line.save() }
            #expect(writeStatements(statements) == [#"UPDATE "order_lines" SET "product_id" = ? WHERE "order_id" = ? AND "product_id" = ?"#])
            #expect(try ShopOrderLine.find(key: ["order_id": secondID, "product_id": try requireID(lines.chai)]) == nil)
            let moved = try #require(try ShopOrderLine.find(key: ["order_id": secondID, "product_id": try requireID(lines.chang)]))
            #expect(moved.quantity == 1)
            #expect(moved.id == rowID)
            // The object now names the moved line.
            line.quantity = 4
            try line.save()
            try moved.reload()
            #expect(moved.quantity == 4)
        }
    }

    @Test func addingALineToAnotherOrderMovesItByItsOldKey() throws {
        try withModelDB { db in
            let lines = try Self.makeLines()
            let chang = try requireID(lines.chang)
            let line = try #require(try ShopOrderLine.find(key: ["order_id": try requireID(lines.first), "product_id": chang]))
            // The foreign key is part of the key: add() renames the line into the other order.
            try lines.second.lines.add(line)
            #expect(line.orderId == lines.second.id)
            #expect(try lines.first.lines.all().map(\.productId) == [try requireID(lines.chai)])
            #expect(try lines.second.lines.all().map(\.productId) == [try requireID(lines.chai), chang])
            #expect(try modelRowCount(db, "order_lines") == 3)
        }
    }

    @Test func upsertConflictsOnAllKeyColumns() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            let lines = try Self.makeLines()
            let incoming = ShopOrderLine()
            incoming.orderId = try requireID(lines.first)
            incoming.productId = try requireID(lines.chang)
            incoming.quantity = 50
            incoming.unitPriceCents = 1700
            let (_, statements) = try recorder.recording { try incoming.upsert() }
            #expect(writeStatements(statements).first?.contains(#"ON CONFLICT("order_id", "product_id") DO UPDATE SET "quantity" = excluded."quantity", "unit_price_cents" = excluded."unit_price_cents""#) == true,
                    "\(statements)")
            #expect(try modelRowCount(db, "order_lines") == 3)
            #expect(try ShopOrderLine.find(key: ["order_id": try requireID(lines.first), "product_id": try requireID(lines.chang)])?.quantity == 50)
            #expect(incoming.id != nil)
            // A new key: inserted.
            let fresh = ShopOrderLine()
            fresh.orderId = try requireID(lines.second)
            fresh.productId = try requireID(lines.chang)
            try fresh.upsert()
            #expect(try modelRowCount(db, "order_lines") == 4)
        }
    }

    @Test func findAllAndRelationsReturnLinesInKeyOrder() throws {
        try withModelDB { db in
            let lines = try Self.makeLines()
            // Insert a line whose key sorts first, after the others.
            try db.execute("INSERT INTO products (id, sku, name, priceCents) VALUES (0, 'AAA', 'Aniseed', 1000)")
            let cheap = try #require(try ShopProduct.find(id: 0))
            try Shop.line(lines.second, cheap, quantity: 7)
            try Shop.line(lines.first, cheap, quantity: 8)
            let firstID = try requireID(lines.first), secondID = try requireID(lines.second)
            let chai = try requireID(lines.chai), chang = try requireID(lines.chang)
            // findAll() and first() order by the class's `primaryKey`, which a composite-key
            // model leaves at "id" (the rowid): the fix belongs in Query.orderedByKeyIfUnordered
            // and findAll (the lead's files), using Query.orderedByKeyIfUnordered.
            let keys = try ShopOrderLine.findAll().map { [$0.orderId, $0.productId] }
            #expect(keys == [[firstID, 0], [firstID, chai], [firstID, chang], [secondID, 0], [secondID, chai]])
            let first = try ShopOrderLine.all.first()
            #expect(first?.productId == 0)
            let inKeyOrder = try ShopOrderLine.all.orderedByKeyIfUnordered.all().map { [$0.orderId, $0.productId] }
            #expect(inKeyOrder == [[firstID, 0], [firstID, chai], [firstID, chang], [secondID, 0], [secondID, chai]])
            #expect(try lines.first.lines.all().map(\.productId) == [0, chai, chang])
            let eager = try ShopOrder.all.order(by: "id").including(\.lines).all()
            #expect(try eager.map { try $0.lines.all().map(\.productId) } == [[0, chai, chang], [0, chai]])
        }
    }

    @Test func aCompositeKeyCannotBeReferencedByOneColumn() throws {
        final class LineNote: ModelTestRecord {
            @Column(references: ShopOrderLine.self) var lineId: Int64 = 0
            var line: BelongsTo<ShopOrderLine> { belongsTo(\.$lineId) }
        }
        try withModelDB { _ in
            try Shop.createTables()
            let error = expectActiveObjectError { try LineNote.createTable() }
            #expect(error?.isInvalidModel == true)
            #expect("\(error.map { "\($0)" } ?? "")".contains("order_id"))
            let note = LineNote()
            note.lineId = 1
            #expect(expectActiveObjectError { _ = try note.line.get() }?.isInvalidModel == true)
        }
    }
}
