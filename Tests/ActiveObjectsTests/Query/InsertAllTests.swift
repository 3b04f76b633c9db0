import CSQLite
import Foundation
import Testing
@testable import ActiveObjects

/// A model whose hooks `insertAll` must run once per object, in order, and whose validation
/// can refuse one object of a batch.
final class InsertHooked: ModelTestRecord {
    @Column var name: String = ""
    @Column var normalized: String = ""
    @Column(unique: true) var code: String? = nil
    @Column var when: Date? = nil
    @Column var amount: Decimal? = nil
    @JSONColumn var tags: [String] = []

    /// What the hooks saw, in order, across every object.
    static let journal = Locked<[String]>([])
    override func validate() throws {
        Self.journal.withLock { $0.append("validate \(name)") }
        if name.isEmpty { throw ValidationError("name", "must not be empty") }
    }
    override func willSave() throws {
        Self.journal.withLock { $0.append("willSave \(name)") }
        if name == "refuse" { throw TestFailure(message: "willSave refused") }
        normalized = name.uppercased()
    }
    override func didSave() {
        Self.journal.withLock { $0.append("didSave \(name) \(id.map(String.init) ?? "nil")") }
    }
}

/// `insertAll`: hooks per object, chunked multi-row INSERTs, all or nothing, the right ids.
@Suite(.serialized) struct InsertAllTests {
    /// New orders, deterministic: customers C000…C029 must exist.
    static func newOrders(_ count: Int, seed: UInt64 = 3) -> [TradeOrder] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { index in
            let order = TradeOrder()
            order.customerId = index % 9 == 4 ? nil : String(format: "C%03d", Int.random(in: 0..<30, using: &random))
            order.orderDate = Date(timeIntervalSince1970: 1_650_000_000 + Double(index) * 3_600.5)
            order.freight = index % 5 == 0 ? nil : Decimal(Int.random(in: 0...99_999, using: &random)) / 100
            order.shipCity = ShopSeed.cities.randomElement(using: &random)!
            order.priority = index % 5
            order.weight = index % 3 == 0 ? nil : Double(index) / 4
            order.shipped = index % 2 == 0
            return order
        }
    }

    /// Each object equals the row read back under its id.
    static func expectReadBack(_ objects: [TradeOrder], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let rows = Dictionary(uniqueKeysWithValues: try TradeOrder.findAll().map { ($0.id!, "\($0)") })
        for object in objects {
            let id = try #require(object.id, sourceLocation: sourceLocation)
            #expect(rows[id] == "\(object)", "object with id \(id)", sourceLocation: sourceLocation)
            #expect(!object.hasChanges, sourceLocation: sourceLocation)
        }
    }

    @Test func everyObjectGetsItsRowAndID() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try ShopSeed.shop(orders: 25)
            let existing = try TradeOrder.countAll()
            let orders = Self.newOrders(1_000)
            recorder.reset()
            try TradeOrder.insertAll(orders)
            let inserts = recorder.statements.filter { $0.hasPrefix("INSERT") }
            #expect(inserts.count == 5, "1000 rows, 200 per statement: \(inserts.count)")
            #expect(recorder.statements.filter { $0.hasPrefix("BEGIN") }.count == 1)
            #expect(try TradeOrder.countAll() == existing + 1_000)
            try Self.expectReadBack(orders)
            #expect(allDistinct(orders.map { $0.id! }))
            // The objects now hold rows: saving updates, deleting deletes.
            orders[0].priority = 77
            try orders[0].save()
            #expect(try TradeOrder.find(id: orders[0].id!)?.priority == 77)
            #expect(try orders[1].delete())
            #expect(expectActiveObjectError { try TradeOrder.insertAll([orders[2]]) }?.isInvalidArgument == true)
            let fresh = TradeOrder()
            #expect(expectActiveObjectError { try TradeOrder.insertAll([fresh, fresh]) }?.isInvalidArgument == true)
            #expect(fresh.id == nil)
            recorder.reset()
            try TradeOrder.insertAll([])
            #expect(recorder.nonPragma.isEmpty)
        }
    }

    @Test func chunksStayUnderALowVariableLimit() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try ShopSeed.shop(orders: 10)
            // 9 columns: 4 rows per statement under a limit of 40 variables.
            _ = db.writer.setLimit(SQLITE_LIMIT_VARIABLE_NUMBER, 40)
            let orders = Self.newOrders(250, seed: 8)
            recorder.reset()
            try TradeOrder.insertAll(orders)
            let inserts = recorder.statements.filter { $0.hasPrefix("INSERT") }
            #expect(inserts.count == 63, "250 rows in chunks of 4: \(inserts.count)")
            try Self.expectReadBack(orders)
            // Lines (composite key, 5 columns: 8 per statement).
            let lines = orders.prefix(20).flatMap { order in
                (1...3).map { product -> TradeLine in
                    let line = TradeLine()
                    line.orderId = order.id!
                    line.productId = Int64(product)
                    line.unitPrice = Decimal(product) + Decimal(string: "0.99")!
                    line.quantity = product * 2
                    return line
                }
            }
            recorder.reset()
            try TradeLine.insertAll(lines)
            #expect(recorder.statements.filter { $0.hasPrefix("INSERT") }.count == 8)
            let stored = try TradeLine.where(\.$orderId, .in(orders.prefix(20).map { $0.id! })).all()
            #expect(Set(stored.map { "\($0)" }) == Set(lines.map { "\($0)" }))
            #expect(lines.allSatisfy { $0.id != nil && !$0.hasChanges }, "a composite-key rowid table gives rowids")
        }
    }

    @Test func aFailureInAMiddleChunkWritesNothing() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try ShopSeed.shop(orders: 30)
            let before = try TradeOrder.findAll().map { "\($0)" }
            _ = db.writer.setLimit(SQLITE_LIMIT_VARIABLE_NUMBER, 40)
            let orders = Self.newOrders(100, seed: 11)
            orders[57].customerId = "NO SUCH CUSTOMER"   // chunk 15 of 25: a foreign-key failure
            let changes = orders.map(\.changedColumns)
            recorder.reset()
            expectDatabaseError(.constraint) { try TradeOrder.insertAll(orders) }
            #expect(recorder.statements.filter { $0.hasPrefix("INSERT") }.count == 15, "stopped at the failing chunk")
            #expect(try TradeOrder.findAll().map { "\($0)" } == before, "the table is unchanged")
            #expect(orders.allSatisfy { $0.id == nil })
            #expect(orders.map(\.changedColumns) == changes)
            // Fixed, the same objects go in.
            orders[57].customerId = "C001"
            try TradeOrder.insertAll(orders)
            try Self.expectReadBack(orders)

            // A unique constraint, duplicate keys of a composite-key table.
            let lines = (0..<30).map { index -> TradeLine in
                let line = TradeLine()
                line.orderId = orders[index % 10].id!
                line.productId = Int64(100 + index)
                return line
            }
            lines[21].productId = lines[3].productId
            lines[21].orderId = lines[3].orderId
            let lineCount = try TradeLine.countAll()
            expectDatabaseError(.constraint) { try TradeLine.insertAll(lines) }
            #expect(try TradeLine.countAll() == lineCount)
            #expect(lines.allSatisfy { $0.id == nil && $0.hasChanges })
        }
    }

    @Test func validationAndHooksRunPerObject() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try InsertHooked.createTable()
            let names = ["ann", "bob", "cid"]
            func make(_ names: [String]) -> [InsertHooked] {
                names.map { name in
                    let object = InsertHooked()
                    object.name = name
                    object.tags = [name]
                    object.when = Date(timeIntervalSince1970: 1_700_000_000)
                    object.amount = Decimal(string: "19.99")
                    return object
                }
            }
            // A failing validation: nothing written, no INSERT at all, ids stay nil.
            InsertHooked.journal.withLock { $0 = [] }
            recorder.reset()
            let invalid = make(["ann", "", "cid"])
            #expect(expectActiveObjectError { try InsertHooked.insertAll(invalid) }?.isValidationFailed == true)
            #expect(!recorder.statements.contains { $0.hasPrefix("INSERT") })
            #expect(try InsertHooked.countAll() == 0 && invalid.allSatisfy { $0.id == nil })
            #expect(InsertHooked.journal.current == ["validate ann", "willSave ann", "validate "])
            // A throwing willSave: the same.
            let refused = make(["ann", "refuse"])
            #expect(throws: TestFailure.self) { try InsertHooked.insertAll(refused) }
            #expect(try InsertHooked.countAll() == 0 && refused.allSatisfy { $0.id == nil })

            // Success: every validate and willSave before the write, every didSave after, with its id.
            InsertHooked.journal.withLock { $0 = [] }
            let objects = make(names)
            try InsertHooked.insertAll(objects)
            let ids = objects.map { $0.id! }
            #expect(InsertHooked.journal.current == names.flatMap { ["validate \($0)", "willSave \($0)"] }
                + zip(names, ids).map { "didSave \($0) \($1)" })
            let stored = try InsertHooked.all.order(by: \.$id).all()
            #expect(stored.map(\.normalized) == ["ANN", "BOB", "CID"], "what willSave set is written")
            #expect(stored.map { "\($0)" } == objects.map { "\($0)" })
            #expect(stored.allSatisfy { $0.tags.count == 1 && $0.amount == Decimal(string: "19.99") })
        }
    }

    @Test func valuesAreStoredAsSaveStoresThem() throws {
        try withModelDB { db in
            try InsertStrategyItem.createTable()
            let made = (0..<3).map { index -> InsertStrategyItem in
                let item = InsertStrategyItem()
                item.name = "n\(index)"
                item.seen = Date(timeIntervalSince1970: 1_000 + Double(index))
                item.price = Decimal(string: "1.10")
                item.tags = ["t\(index)"]
                return item
            }
            try InsertStrategyItem.insertAll(made)
            let saved = InsertStrategyItem()
            saved.name = "saved"
            saved.seen = Date(timeIntervalSince1970: 1_000)
            saved.price = Decimal(string: "1.10")
            saved.tags = ["t0"]
            try saved.save()
            // Column for column, the batch rows are stored as save() stores a row (.unixSeconds here).
            let raw = try db.rows("SELECT typeof(seen) AS t, seen, price, tags FROM insert_strategy_item ORDER BY id").map { "\($0)" }
            #expect(raw.first == raw.last, "\(raw)")
            #expect(raw.first == "[t: TEXT 'real', seen: REAL 1000.0, price: TEXT '1.1', tags: TEXT '[\"t0\"]']")
            #expect(try InsertStrategyItem.all.order(by: \.$id).limit(3).all().map { "\($0)" } == made.map { "\($0)" })
        }
    }

    @Test func idsSetByHandAndGapsInTheRowids() throws {
        try withModelDB { db in
            try ShopSeed.shop(orders: 20)
            // The last rows deleted: new rowids follow the largest remaining one.
            try db.execute("DELETE FROM Orders WHERE OrderID > 15")
            let byHand = Self.newOrders(6, seed: 5)
            byHand[1].id = 5_000
            byHand[4].id = 700
            try TradeOrder.insertAll(byHand)
            #expect(byHand[1].id == 5_000 && byHand[4].id == 700)
            try Self.expectReadBack(byHand)
            #expect(Set(byHand.map { $0.id! }) == [5_000, 700, 5_001, 5_002, 5_003, 5_004])

            // A hand-set id that collides: all or nothing, hand ids kept, others nil.
            let clash = Self.newOrders(5, seed: 6)
            clash[3].id = 700
            let count = try TradeOrder.countAll()
            expectDatabaseError(.constraint) { try TradeOrder.insertAll(clash) }
            #expect(try TradeOrder.countAll() == count)
            #expect(clash.map(\.id) == [nil, nil, nil, 700, nil])
        }
    }

    @Test func naturalKeysWithoutRowIDAndAutoincrement() throws {
        try withModelDB { db in
            try ShopSeed.shop(orders: 0)
            try ShopSeed.music()
            let customers = (0..<50).map { index -> TradeCustomer in
                let customer = TradeCustomer()
                customer.code = "N\(index)"
                customer.companyName = "New \(index)"
                customer.country = index % 2 == 0 ? "Peru" : nil
                return customer
            }
            try TradeCustomer.insertAll(customers)
            for customer in customers {
                let rowid: Int64? = try db.scalar("SELECT rowid FROM Customers WHERE CustomerID = ?", [customer.code])
                #expect(customer.id == rowid && customer.id != nil)
                #expect(try TradeCustomer.find(key: customer.code).map { "\($0)" } == "\(customer)")
            }
            // WITHOUT ROWID: no ids; the objects hold their rows (save updates, by key).
            let playlist = try #require(try TunePlaylist.findFirst(where: ["name": "Playlist 9"]))
            let tracks = try TuneTrack.all.order(by: \.$id).limit(40).all()
            let entries = tracks.enumerated().map { position, track -> TunePlaylistTrack in
                let entry = TunePlaylistTrack()
                entry.playlistId = playlist.id!
                entry.trackId = track.id!
                entry.position = position
                return entry
            }
            try TunePlaylistTrack.insertAll(entries)
            #expect(entries.allSatisfy { $0.id == nil && !$0.hasChanges })
            #expect(sortedIDs(try playlist.tracks.all()) == sortedIDs(tracks))
            entries[3].position = 333
            try entries[3].save()
            #expect(try TunePlaylistTrack.count(where: ["playlistId": playlist.id!]) == 40)
            // Not find(key:): first() orders a WITHOUT ROWID table by "rowid" (reported to the lead).
            #expect(try TunePlaylistTrack.where(["playlistId": playlist.id!, "trackId": tracks[3].id!]).all().map(\.position) == [333])

            // A table created AUTOINCREMENT by another tool: rowids follow its high-water mark.
            try db.execute("CREATE TABLE insert_hooked (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL DEFAULT '', normalized TEXT NOT NULL DEFAULT '', code TEXT UNIQUE, \"when\" TEXT, amount TEXT, tags TEXT NOT NULL DEFAULT '[]')")
            try db.execute("INSERT INTO insert_hooked (id, name) VALUES (90, 'old')")
            try db.execute("DELETE FROM insert_hooked")
            let hooked = ["x", "y", "z"].map { name -> InsertHooked in
                let object = InsertHooked()
                object.name = name
                return object
            }
            try InsertHooked.insertAll(hooked)
            #expect(hooked.map(\.id) == [91, 92, 93])
            #expect(try InsertHooked.all.order(by: \.$id).pluck(\.$name) == ["x", "y", "z"])
        }
    }

    @Test func insideATransactionThatRollsBack() throws {
        try withModelDB { db in
            try ShopSeed.shop(orders: 5)
            let orders = Self.newOrders(30, seed: 2)
            try? db.transaction {
                try TradeOrder.insertAll(orders)
                #expect(orders.allSatisfy { $0.id != nil })
                #expect(try TradeOrder.countAll() == 35)
                throw TestFailure()
            }
            #expect(try TradeOrder.countAll() == 5)
            #expect(orders.allSatisfy { $0.id == nil }, "the objects are new again")
            try TradeOrder.insertAll(orders)
            try Self.expectReadBack(orders)

            // Committed with the outer transaction: the ids stay.
            let more = Self.newOrders(10, seed: 4)
            try db.transaction { try TradeOrder.insertAll(more) }
            try Self.expectReadBack(more)
        }
    }

    @Test func aCommitThatFailsLeavesTheObjectsNew() throws {
        try withModelDB { db in
            // A deferred foreign key fails at COMMIT, after every INSERT succeeded.
            try db.execute("CREATE TABLE deferred_parent (id INTEGER PRIMARY KEY)")
            try db.execute("""
                CREATE TABLE deferred_child (id INTEGER PRIMARY KEY,
                  parentId INTEGER REFERENCES deferred_parent(id) DEFERRABLE INITIALLY DEFERRED)
                """)
            let children = (0..<3).map { index -> DeferredChild in
                let child = DeferredChild()
                child.parentId = index == 1 ? 999 : nil
                return child
            }
            expectDatabaseError(.constraint) { try DeferredChild.insertAll(children) }
            #expect(try DeferredChild.countAll() == 0)
            #expect(children.allSatisfy { $0.id == nil && $0.hasChanges == ($0.parentId != nil) }, "\(children.map(\.id))")
            children[1].parentId = nil
            try DeferredChild.insertAll(children)
            #expect(try DeferredChild.all.order(by: \.$id).pluck(\.$id) == children.map(\.id))
        }
    }

    @Test func aTriggerInsertingIntoTheSameTableIsRefused() throws {
        try withModelDB { db in
            try ShopSeed.shop(orders: 3)
            try db.execute("""
                CREATE TRIGGER echo AFTER INSERT ON Orders WHEN NEW.Priority = 4
                BEGIN INSERT INTO Orders (OrderDate, Priority, Shipped) VALUES (NEW.OrderDate, 0, 0); END
                """)
            let orders = Self.newOrders(10, seed: 1)
            let count = try TradeOrder.countAll()
            let error = expectActiveObjectError { try TradeOrder.insertAll(orders) }
            #expect(error?.isInvalidArgument == true)
            #expect(try TradeOrder.countAll() == count && orders.allSatisfy { $0.id == nil })
        }
    }

    @Test func asyncForm() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("insert.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try ShopSeed.shop(orders: 12)
            try InsertHooked.createTable()
            let orders = Self.newOrders(450, seed: 21)
            try await TradeOrder.insertAll(orders)
            try Self.expectReadBack(orders)

            let failing = Self.newOrders(300, seed: 22)
            failing[250].customerId = "NOBODY"
            let count = try await TradeOrder.countAll()
            await #expect(throws: DatabaseError.self) { try await TradeOrder.insertAll(failing) }
            let after = try await TradeOrder.countAll()
            #expect(after == count && failing.allSatisfy { $0.id == nil && $0.hasChanges })

            InsertHooked.journal.withLock { $0 = [] }
            let hooked = ["p", "q"].map { name -> InsertHooked in
                let object = InsertHooked()
                object.name = name
                return object
            }
            try await InsertHooked.insertAll(hooked)
            #expect(InsertHooked.journal.current == ["validate p", "willSave p", "validate q", "willSave q",
                                                     "didSave p \(hooked[0].id!)", "didSave q \(hooked[1].id!)"])
            let normalized = try await InsertHooked.all.order(by: \.$id).pluck(\.$normalized)
            #expect(normalized == ["P", "Q"])
            let invalid = [InsertHooked()]
            await #expect(throws: ActiveObjectError.self) { try await InsertHooked.insertAll(invalid) }
        }
    }

    // MARK: Integer natural keys and subclass models

    @Test func insertAllOfAnIntegerNaturalKeyGivesEachObjectItsKeyAsId() throws {
        try withModelDB { db in
            try NumberedWarehouse.createTable()
            let (a, b) = (NumberedWarehouse(), NumberedWarehouse())
            (a.number, a.city, b.number, b.city) = (7, "A", 2, "B")
            try NumberedWarehouse.insertAll([a, b])
            #expect(a.id == 7 && b.id == 2)
            let (c, d) = (NumberedWarehouse(), NumberedWarehouse())
            (c.number, d.number) = (100, 50)
            try NumberedWarehouse.insertAll([c, d])
            #expect(c.id == 100 && d.id == 50)
            let rows: [[Int]] = try db.rows("SELECT rowid, number FROM numbered_warehouse ORDER BY number").map { [try $0[0], try $0[1]] }
            #expect(rows == [[2, 2], [7, 7], [50, 50], [100, 100]])
            c.city = "C"
            try c.save()
            #expect(try NumberedWarehouse.find(key: 100)?.city == "C")
        }
    }

    @Test func insertAllMixesHandNumberedAndSQLiteNumberedKeys() throws {
        try withModelDB { db in
            try OptionallyNumberedBin.createTable()
            let bins = [10, nil, 3, nil].enumerated().map { index, number -> OptionallyNumberedBin in
                let bin = OptionallyNumberedBin()
                bin.number = number
                bin.label = "bin \(index)"
                return bin
            }
            try OptionallyNumberedBin.insertAll(bins)
            let stored: [String: Int] = try Dictionary(uniqueKeysWithValues: db.rows(
                "SELECT label, rowid FROM optionally_numbered_bin").map { (try $0[0], try $0[1]) })
            #expect(stored.count == 4)
            for bin in bins { #expect(bin.id.map(Int.init) == stored[bin.label], "\(bin.label)") }
            #expect(bins[0].id == 10 && bins[2].id == 3)
            // The two SQLite numbered follow the largest key, in order.
            #expect(Set([bins[1].id, bins[3].id]) == [11, 12])
        }
    }

    @Test func insertAllRefusesObjectsOfASubclassModel() throws {
        try withModelDB { db in
            try StaffPerson.createTable()
            try StaffEmployee.createTable()
            let employee = StaffEmployee()
            employee.name = "Eve"
            let plain = StaffPerson()
            plain.name = "Sam"
            let people: [StaffPerson] = [plain, employee]
            let error = expectActiveObjectError { try StaffPerson.insertAll(people) }
            #expect(error?.isInvalidArgument == true)
            #expect("\(error.map { "\($0)" } ?? "")".contains("StaffEmployee"))
            let rows: Int? = try db.scalar("SELECT (SELECT count(*) FROM staff_person) + (SELECT count(*) FROM staff_employee)")
            #expect(rows == 0)
            #expect(plain.id == nil && employee.id == nil)
        }
    }
}

/// A child whose foreign key is checked only at COMMIT (the table is created by raw SQL).
final class DeferredChild: ModelTestRecord {
    @Column var parentId: Int64? = nil
}

/// A model with its own date strategy (not shared with other suites: their hooks count calls).
final class InsertStrategyItem: ModelTestRecord {
    override class var dateStrategy: DateStrategy? { .unixSeconds }
    @Column var name: String = ""
    @Column var seen: Date? = nil
    @Column var price: Decimal? = nil
    @JSONColumn var tags: [String] = []
}

/// An integer natural key numbered by hand (insertAllOfAnIntegerNaturalKeyGivesEachObjectItsKeyAsId).
final class NumberedWarehouse: ModelTestRecord {
    override class var primaryKey: String { "number" }
    @Column var number: Int = 0
    @Column var city: String = ""
}

/// An optional integer natural key: nil asks SQLite for the number (insertAllMixesHandNumberedAndSQLiteNumberedKeys).
final class OptionallyNumberedBin: ModelTestRecord {
    override class var primaryKey: String { "number" }
    @Column var number: Int? = nil
    @Column var label: String = ""
}

/// A model and a subclass model (insertAllRefusesObjectsOfASubclassModel).
class StaffPerson: ModelTestRecord {
    @Column var name: String = ""
}

final class StaffEmployee: StaffPerson {
    @Column var salary: Int = 0
}
