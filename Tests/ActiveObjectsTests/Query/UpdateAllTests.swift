import Foundation
import Testing
@testable import ActiveObjects

/// A model whose values `updateAll` must convert as the model would: its own date strategy,
/// a narrow integer, a JSON column, a unique column, hooks that must not run.
final class UpdateAllItem: ModelTestRecord {
    override class var dateStrategy: DateStrategy? { .unixSeconds }
    @Column var name: String = ""
    @Column(unique: true) var code: String? = nil
    @Column var small: Int8 = 0
    @Column var ratio: Double = 0
    @Column var seen: Date? = nil
    @Column var price: Decimal? = nil
    @Column var active: Bool = true
    @JSONColumn var tags: [String] = []

    static let hookCalls = Locked(0)
    override func validate() throws { Self.hookCalls.withLock { $0 += 1 } }
    override func willSave() throws { Self.hookCalls.withLock { $0 += 1 } }
}

/// `updateAll`: one UPDATE, keys checked, values converted, rows changed counted.
@Suite(.serialized) struct UpdateAllTests {
    /// Every column of every order, for comparing snapshots.
    static func rows(_ orders: [TradeOrder]) -> [Int64: String] {
        Dictionary(uniqueKeysWithValues: orders.map { ($0.id!, "\($0)") })
    }

    @Test func oneUpdateChangesExactlyTheMatchingRows() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try ShopSeed.shop()
            let before = try ShopSnapshot()
            let unshipped = Set(before.orders.filter { !$0.shipped }.map { $0.id! })

            let (changed, sql) = try recorder.recording {
                try TradeOrder.where(\.$shipped == false).updateAll(["priority": 9, "ShipCity": nil, "freight": Decimal(string: "12.50")])
            }
            #expect(changed == unshipped.count)
            let writes = sql.filter { !$0.uppercased().hasPrefix("PRAGMA") }
            #expect(writes.count == 1 && writes[0].hasPrefix("UPDATE"), "one UPDATE: \(writes)")
            let after = try TradeOrder.findAll()
            for order in after {
                let old = try #require(before.orders.first { $0.id == order.id })
                if unshipped.contains(order.id!) {
                    #expect(order.priority == 9 && order.shipCity == nil && order.freight == Decimal(string: "12.5"))
                    #expect(order.customerId == old.customerId && order.orderDate == old.orderDate && order.weight == old.weight)
                } else {
                    #expect("\(order)" == "\(old)", "untouched row \(order.id!)")
                }
            }

            // Through a relation, with order and limit (keys as a subquery), composite and WITHOUT ROWID keys.
            let french = Set(before.orders.filter { before.customer($0.customerId)?.country == "France" }.map { $0.id! })
            #expect(try TradeOrder.all.joining(\.customer, where: \.$country == "France").updateAll(["Shipped": true]) == french.count)
            #expect(Set(try TradeOrder.where(\.$shipped == true).pluck(\.$id).compactMap { $0 }).isSuperset(of: french))
            let earliest = before.orders.sorted { $0.orderDate != $1.orderDate ? $0.orderDate < $1.orderDate : $0.id! < $1.id! }.prefix(10)
            #expect(try TradeOrder.all.order(by: \.$orderDate).order(by: \.$id).limit(10).updateAll(["priority": 42]) == 10)
            #expect(Set(try TradeOrder.where(\.$priority == 42).pluck(\.$id).compactMap { $0 }) == Set(earliest.map { $0.id! }))
            let topLines = before.lines.sorted { ($0.quantity, $0.orderId, $0.productId) > ($1.quantity, $1.orderId, $1.productId) }.prefix(5)
            #expect(try TradeLine.all.order(by: \.$quantity, .descending).order(by: \.$orderId, .descending)
                .order(by: \.$productId, .descending).limit(5).updateAll(["Discount": 0.5]) == 5)
            let discounted = try TradeLine.where(\.$discount == 0.5).all()
            #expect(Set(discounted.map { "\($0.orderId)/\($0.productId)" }) == Set(topLines.map { "\($0.orderId)/\($0.productId)" }))
            // No row matches: nothing changes.
            #expect(try TradeOrder.where(\.$priority > 1000).updateAll(["priority": 1]) == 0)
        }
    }

    @Test func manyToManyAndWithoutRowIDTables() throws {
        try withModelDB { _ in
            try ShopSeed.music()
            let music = try MusicSnapshot()
            let jazzTracks = Set(music.tracks.filter { t in
                music.playlists.contains { p in p.name == "Playlist 1" && music.tracks(of: p).contains { $0.id == t.id } }
            }.map { $0.id! })
            #expect(try TuneTrack.all.joining(\.playlists, where: \.$name == "Playlist 1").updateAll(["genre": "Jazz"]) == jazzTracks.count)
            let tracks = try TuneTrack.findAll()
            for track in tracks {
                let old = try #require(music.tracks.first { $0.id == track.id })
                #expect(track.genre == (jazzTracks.contains(track.id!) ? "Jazz" : old.genre))
            }
            let firstEntries = music.entries.sorted { ($0.position, $0.playlistId, $0.trackId) < ($1.position, $1.playlistId, $1.trackId) }.prefix(4)
            #expect(try TunePlaylistTrack.all.order(by: \.$position).order(by: \.$playlistId).order(by: \.$trackId).limit(4)
                .updateAll(["position": 999]) == 4)
            let moved = try TunePlaylistTrack.where(\.$position == 999).all()
            #expect(Set(moved.map { "\($0.playlistId)/\($0.trackId)" }) == Set(firstEntries.map { "\($0.playlistId)/\($0.trackId)" }))
        }
    }

    @Test func keysAreCheckedBeforeAnySQL() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try ShopSeed.shop(orders: 30)
            let before = try TradeOrder.findAll()
            for bad: [String: Any?] in [["nope": 1], ["priority": 1, "Priority; DROP TABLE Orders": 2], ["ship_city": "x"]] {
                recorder.reset()
                let error = expectActiveObjectError { _ = try TradeOrder.all.updateAll(bad) }
                #expect(error?.isUnknownColumn == true, "\(bad): \(String(describing: error))")
                #expect(recorder.nonPragma.isEmpty, "no SQL for \(bad): \(recorder.nonPragma)")
            }
            recorder.reset()
            #expect(expectActiveObjectError { _ = try TradeOrder.all.updateAll([:]) }?.isInvalidArgument == true)
            #expect(expectActiveObjectError { _ = try TradeOrder.all.updateAll(["OrderID": 5]) }?.isInvalidArgument == true)
            #expect(expectActiveObjectError { _ = try TradeOrder.all.updateAll(["id": 5]) }?.isInvalidArgument == true)
            // A property name and its column name: one column set twice (SQLite would keep the last silently).
            #expect(expectActiveObjectError { _ = try TradeOrder.all.updateAll(["shipCity": "X", "ShipCity": "Y"]) }?.isInvalidArgument == true)
            #expect(recorder.nonPragma.isEmpty)
            #expect(Self.rows(try TradeOrder.findAll()) == Self.rows(before))
        }
    }

    @Test func valuesAreConvertedAsTheModelWould() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try UpdateAllItem.createTable()
            for index in 0..<6 {
                let item = UpdateAllItem()
                item.name = "item \(index)"
                item.code = "code \(index)"
                item.active = index % 2 == 0
                try item.save()
            }
            UpdateAllItem.hookCalls.withLock { $0 = 0 }
            let date = Date(timeIntervalSince1970: 1_700_000_000.5)
            #expect(try UpdateAllItem.where(\.$active == true).updateAll([
                "seen": date, "ratio": 3, "small": 7, "price": 0.1, "tags": ["a", "b"],
            ]) == 3)
            #expect(UpdateAllItem.hookCalls.current == 0, "updateAll runs no hooks or validation")
            let raw = try db.rows("SELECT typeof(seen) AS t, seen, typeof(ratio) AS r, ratio, price, tags FROM update_all_item WHERE active = 1")
            for row in raw {
                #expect(try row["t"] as String == "real", "the model's .unixSeconds strategy")
                #expect(try row["seen"] as Double == 1_700_000_000.5)
                #expect(try row["r"] as String == "real", "an Int into a Double column is stored as REAL")
                #expect(try row["ratio"] as Double == 3)
                #expect(try row["price"] as String == "0.1", "a Double into a Decimal column: its shortest digits")
                #expect(try row["tags"] as String == #"["a","b"]"#)
            }
            let items = try UpdateAllItem.where(\.$active == true).all()
            #expect(items.count == 3 && items.allSatisfy { $0.seen == date && $0.small == 7 && $0.tags == ["a", "b"] && $0.price == Decimal(string: "0.1") })

            // Refused before any SQL, nothing written: NULL into a non-optional, out of range, wrong types.
            let snapshot = try db.rows("SELECT * FROM update_all_item ORDER BY id").map { "\($0)" }
            for bad: [String: Any?] in [["name": nil], ["small": 300], ["small": "x"], ["ratio": "fast"], ["active": [1, 2]],
                                         ["seen": "not a date"], ["tags": 5], ["price": "1,5"]] {
                recorder.reset()
                let error = expectActiveObjectError { _ = try UpdateAllItem.all.updateAll(bad) }
                #expect(error?.isInvalidValue == true, "\(bad): \(String(describing: error))")
                #expect(recorder.nonPragma.isEmpty, "\(bad): \(recorder.nonPragma)")
            }
            #expect(try db.rows("SELECT * FROM update_all_item ORDER BY id").map { "\($0)" } == snapshot)

            // A constraint failure changes nothing (one statement).
            let duplicate = expectDatabaseError(.constraint) { _ = try UpdateAllItem.all.updateAll(["code": "same"]) }
            #expect(duplicate != nil)
            #expect(try db.rows("SELECT * FROM update_all_item ORDER BY id").map { "\($0)" } == snapshot)
            // Text that reads as a date is stored with the model's strategy too.
            #expect(try UpdateAllItem.where(\.$active == false).updateAll(["seen": "2024-01-02 03:04:05"]) == 3)
            #expect(try db.rows("SELECT DISTINCT typeof(seen) AS t, seen FROM update_all_item WHERE active = 0").map { "\($0)" }
                == ["[t: TEXT 'real', seen: REAL 1704164645.0]"])
            // Setting NULL where the property is optional; a value of another numeric type that fits.
            #expect(try UpdateAllItem.all.updateAll(["code": nil, "small": Int64(-5)]) == 6)
            #expect(try UpdateAllItem.all.pluck(\.$code).allSatisfy { $0 == nil })
            #expect(try UpdateAllItem.all.pluck(\.$small).allSatisfy { $0 == -5 })
            // Inside db.read it is a misuse.
            #expect(expectActiveObjectError { try db.read { _ = try UpdateAllItem.all.updateAll(["small": 1]) } }?.isMisuse == true)
        }
    }

    @Test func asyncFormAndLiveQueriesSeeTheChange() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("update.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try ShopSeed.shop(orders: 80)
            let orders = try ShopSnapshot()
            let shippedProbe = LiveProbe(TradeOrder.where(\.$shipped == true).values()) { $0.count }
            let bigProbe = LiveProbe(TradeCustomer.all.joining(\.orders, where: \.$freight > 800).values()) { $0.map(\.code).sorted() }
            defer { shippedProbe.cancel(); bigProbe.cancel() }
            #expect(await shippedProbe.waitFor(count: 1))
            #expect(await bigProbe.waitFor(count: 1))
            #expect(shippedProbe.elements.first == orders.orders.filter(\.shipped).count)

            let changed = try await TradeOrder.where(\.$shipped == false).updateAll(["shipped": true])
            #expect(changed == orders.orders.filter { !$0.shipped }.count)
            #expect(await eventually { shippedProbe.elements.last == orders.orders.count }, "the live query saw the UPDATE")

            // A live query joined to the updated table sees it too.
            let target = try #require(orders.customers.first { c in !orders.orders(of: c).isEmpty && !(bigProbe.elements.first ?? []).contains(c.code) })
            let raised = try await TradeOrder.where(\.$customerId == target.code).updateAll(["freight": Decimal(900)])
            #expect(raised == orders.orders(of: target).count)
            #expect(await eventually { bigProbe.elements.last?.contains(target.code) == true }, "\(bigProbe.elements)")

            // Errors of the async form: unknown key, no SQL.
            await #expect(throws: ActiveObjectError.self) { _ = try await TradeOrder.all.updateAll(["nope": 1]) }
        }
    }
}

/// Waits (polling, at most `timeout` seconds) until `condition` holds; false when it never did.
nonisolated(nonsending) func eventually(timeout: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 2_000_000)
    }
    return condition()
}
