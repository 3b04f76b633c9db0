import Foundation
import Testing
@testable import ActiveObjects

// Read-only models (API.md §20): views, and tables the app must not write. Reads work as for
// any model; every write throws `misuse` before anything runs; createTable() creates nothing.

final class ViewedOrder: ModelTestRecord {
    override class var tableName: String { "shop_order" }
    @Column var customer = ""
    @Column var amount = 0.0
    var subtotal: HasMany<OrderTotal> { hasMany(\.$orderId) }
}

/// A view without a key column: objects have no id.
final class OrderTotal: ModelTestRecord {
    override class var tableName: String { "Order Totals" }
    override class var isReadOnly: Bool { true }
    @Column("OrderID", references: ViewedOrder.self) var orderId: Int64 = 0
    @Column("Total") var total: Double = 0
    @Column("Customer") var customer: String? = nil
    var order: BelongsTo<ViewedOrder> { belongsTo(\.$orderId) }
}

/// The same view keyed by one of its columns.
final class KeyedOrderTotal: ModelTestRecord {
    override class var tableName: String { "Order Totals" }
    override class var isReadOnly: Bool { true }
    override class var primaryKey: String { "OrderID" }
    @Column("OrderID") var orderId: Int64 = 0
    @Column("Total") var total: Double = 0
}

/// A table the app reads but must not write.
final class FrozenOrder: ModelTestRecord {
    override class var tableName: String { "shop_order" }
    override class var isReadOnly: Bool { true }
    @Column var customer = ""
    @Column var amount = 0.0
}

final class HookCountingView: ModelTestRecord {
    override class var tableName: String { "Order Totals" }
    override class var isReadOnly: Bool { true }
    @Column("OrderID") var orderId: Int64 = 0
    @Column("Total") var total: Double = 0
    nonisolated(unsafe) static var hooks = 0
    override func willSave() throws { Self.hooks += 1 }
    override func willDelete() throws { Self.hooks += 1 }
}

func withOrdersAndView<T>(_ body: (Database) throws -> T) throws -> T {
    try withFileModelDB { db in
        try ViewedOrder.createTable()
        for (customer, amount) in [("Ann", 10.5), ("Bob", 20.0), ("Ann", 7.25), ("Cy", 100.0)] {
            let order = ViewedOrder()
            order.customer = customer
            order.amount = amount
            try order.save()
        }
        try db.execute("""
            CREATE VIEW "Order Totals" AS
            SELECT id AS OrderID, amount * 2 AS Total, customer AS Customer FROM shop_order
            """)
        return try body(db)
    }
}

/// Every row of the file's tables and views, as text: a write that happened shows here.
func dump(_ db: Database) throws -> [String] {
    var lines: [String] = []
    for name in try db.rows("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name").map({ try $0[0] as String }) {
        for row in try db.rows("SELECT * FROM \(SQLIdentifier.quote(name))") {
            let values = try (0..<row.count).map { "\(try row[$0] as DatabaseValue)" }
            lines.append(name + ": " + values.joined(separator: "|"))
        }
    }
    return lines + (try db.rows("SELECT sql FROM sqlite_master ORDER BY name").map { (try? $0[0] as String) ?? "" })
}

@Suite struct ReadOnlyModelTests {
    @Test func viewsReadLikeTables() throws {
        try withOrdersAndView { _ in
            let all = try OrderTotal.all.order(by: \.$orderId).all()
            #expect(all.map(\.total) == [21.0, 40.0, 14.5, 200.0])
            #expect(all.allSatisfy { $0.id == nil })
            #expect(try OrderTotal.all.count() == 4)
            #expect(try OrderTotal.findAll().count == 4)
            #expect(try OrderTotal.all.first() != nil)
            #expect(try OrderTotal.where(\.$total > 20).count() == 3)
            #expect(try OrderTotal.where(["Customer": "Ann"]).pluck(\.$orderId).sorted() == [1, 3])
            #expect(try OrderTotal.find(where: ["OrderID": 4]).first?.total == 200)
            #expect(try OrderTotal.all.sum(\.$total) == 275.5)
            #expect(try OrderTotal.all.page(2, size: 3).count == 1)
            // Relations both ways.
            let ann = try #require(try ViewedOrder.find(id: 1))
            #expect(try ann.subtotal.all().map(\.total) == [21.0])
            #expect(try OrderTotal.find(where: ["OrderID": 2]).first?.order.get()?.customer == "Bob")
            let withOrders = try OrderTotal.all.including(\.order).all()
            #expect(withOrders.count == 4)
            // A key named in primaryKey: find(key:) works.
            #expect(try KeyedOrderTotal.find(key: 3)?.total == 14.5)
            #expect(try KeyedOrderTotal.all.all().map(\.orderId) == [1, 2, 3, 4])
        }
    }

    @Test func everyWriteIsRefusedAndWritesNothing() throws {
        try withOrdersAndView { db in
            let before = try dump(db)
            let loaded = try #require(try OrderTotal.all.first())
            loaded.total = 1
            let fresh = OrderTotal()
            fresh.orderId = 99
            let frozen = try #require(try FrozenOrder.all.first())
            frozen.amount = 0
            HookCountingView.hooks = 0
            let hooked = try #require(try HookCountingView.all.first())
            let writes: [(String, () throws -> Void)] = [
                ("save", { try loaded.save() }), ("insert", { try fresh.insert() }), ("update", { try loaded.update() }),
                ("upsert", { try fresh.upsert() }), ("delete", { _ = try loaded.delete() }),
                ("delete(permanently:)", { _ = try loaded.delete(permanently: true) }),
                ("insertAll", { try OrderTotal.insertAll([fresh]) }),
                ("updateAll", { _ = try OrderTotal.all.updateAll(["Total": 0]) }),
                ("query delete", { _ = try OrderTotal.where(\.$total > 0).delete() }),
                ("delete(where:)", { _ = try OrderTotal.delete(where: ["OrderID": 1]) }),
                ("deleteAll", { _ = try OrderTotal.deleteAll() }),
                ("table save", { try frozen.save() }), ("table delete", { _ = try frozen.delete() }),
                ("table updateAll", { _ = try FrozenOrder.all.updateAll(["amount": 0]) }),
                ("table deleteAll", { _ = try FrozenOrder.deleteAll(permanently: true) }),
                ("hooked save", { try hooked.save() }), ("hooked delete", { _ = try hooked.delete() }),
            ]
            for (name, write) in writes {
                do {
                    try write()
                    Issue.record("\(name) of a read-only model did not throw")
                } catch let error as ActiveObjectError {
                    guard case .misuse(let message) = error else { Issue.record("\(name): \(error)"); continue }
                    #expect(message.contains("read-only"), "\(name): \(message)")
                }
            }
            #expect(HookCountingView.hooks == 0)
            #expect(try dump(db) == before)
            // The objects are as they were: a read-only object keeps its edits, unsaved.
            #expect(loaded.hasChanges)
            #expect(frozen.amount == 0)
        }
    }

    /// An async test's file database with the orders table and a view over it.
    func withAsyncOrdersAndView(_ body: (Database) async throws -> Void) async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("models.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try synchronously {
                try ViewedOrder.createTable()
                try db.execute("CREATE VIEW \"Order Totals\" AS SELECT id AS OrderID, amount AS Total, customer AS Customer FROM shop_order")
            }
            try await body(db)
        }
    }

    @Test func asyncWritesAreRefusedToo() async throws {
        try await withAsyncOrdersAndView { db in
            try synchronously {
                let order = ViewedOrder()
                order.amount = 3
                try order.save()
            }
            let loaded = try #require(try await OrderTotal.all.first())
            await #expect(throws: ActiveObjectError.self) { try await loaded.save() }
            await #expect(throws: ActiveObjectError.self) { _ = try await loaded.delete() }
            await #expect(throws: ActiveObjectError.self) { try await OrderTotal.insertAll([OrderTotal()]) }
            await #expect(throws: ActiveObjectError.self) { _ = try await OrderTotal.all.updateAll(["Total": 1]) }
            await #expect(throws: ActiveObjectError.self) { _ = try await OrderTotal.deleteAll() }
            #expect(try await ViewedOrder.all.first()?.amount == 3)
        }
    }

    @Test func createTableCreatesNothing() throws {
        try withFileModelDB { db in
            let before = try dump(db)
            #expect(try OrderTotal.schemaPlan().isEmpty)
            try OrderTotal.createTable()
            try OrderTotal.migrate(rebuildingTable: true)
            #expect(try dump(db) == before)
            // Over an existing table too: nothing altered even when the model differs from it.
            try db.execute("CREATE TABLE shop_order (id INTEGER PRIMARY KEY, customer TEXT)")
            let withTable = try dump(db)
            #expect(try FrozenOrder.schemaPlan().isEmpty)
            try FrozenOrder.createTable()
            #expect(try dump(db) == withTable)
        }
    }

    @Test func liveQueriesOfAViewFollowTheTablesBehindIt() async throws {
        try await withAsyncOrdersAndView { db in
            let probe = LiveProbe(OrderTotal.all.values()) { $0.map(\.total) }
            defer { probe.cancel() }
            // (values() emits after each commit of this database that touches what it read;
            // equal results in a row may repeat: compare the distinct steps.)
            func steps() -> [[Double]] {
                probe.elements.reduce(into: []) { result, element in if result.last != element { result.append(element) } }
            }
            #expect(await probe.waitFor(count: 1))
            try synchronously {
                let order = ViewedOrder()
                order.amount = 4
                try order.save()
            }
            let deadline = Date().addingTimeInterval(30)
            while steps() != [[], [4]] && Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
            #expect(steps() == [[], [4]])
            try await db.execute("UPDATE shop_order SET amount = 5")
            while steps() != [[], [4], [5]] && Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
            #expect(steps() == [[], [4], [5]])
        }
    }
}
