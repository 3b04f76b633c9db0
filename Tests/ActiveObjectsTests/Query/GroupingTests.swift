import Foundation
import Testing
@testable import ActiveObjects

/// Per-group aggregates computed in Swift, the way the documentation defines them: NULLs
/// ignored; a group whose values are all NULL sums to 0 and is absent from min, max, average.
enum SwiftGroups {
    static func count<T, K: Hashable>(_ rows: [T], by key: (T) -> K) -> [K: Int] {
        Dictionary(grouping: rows, by: key).mapValues(\.count)
    }

    static func sum<T, K: Hashable, V: Numeric>(_ rows: [T], by key: (T) -> K, _ value: (T) -> V?) -> [K: V] {
        Dictionary(grouping: rows, by: key).mapValues { $0.compactMap(value).reduce(0, +) }
    }

    static func min<T, K: Hashable, V: Comparable>(_ rows: [T], by key: (T) -> K, _ value: (T) -> V?) -> [K: V] {
        Dictionary(grouping: rows, by: key).compactMapValues { $0.compactMap(value).min() }
    }

    static func max<T, K: Hashable, V: Comparable>(_ rows: [T], by key: (T) -> K, _ value: (T) -> V?) -> [K: V] {
        Dictionary(grouping: rows, by: key).compactMapValues { $0.compactMap(value).max() }
    }

    static func average<T, K: Hashable>(_ rows: [T], by key: (T) -> K, _ value: (T) -> Double?) -> [K: Double] {
        Dictionary(grouping: rows, by: key).compactMapValues { group in
            let values = group.compactMap(value)
            return values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
        }
    }
}

/// Whether two dictionaries of doubles have the same keys and values within `tolerance`.
func closeEnough<K: Hashable>(_ lhs: [K: Double], _ rhs: [K: Double], tolerance: Double = 1e-9) -> Bool {
    Set(lhs.keys) == Set(rhs.keys) && lhs.allSatisfy { key, value in
        abs(value - rhs[key]!) <= tolerance * Swift.max(1, abs(value))
    }
}

extension Decimal {
    var double: Double { NSDecimalNumber(decimal: self).doubleValue }
}

/// `group(by:)` with count, sum, min, max and average, compared with Swift.
@Suite struct GroupingTests {
    @Test func perGroupAggregatesMatchSwift() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try ShopSeed.shop()
            let orders = try TradeOrder.findAll()

            let (perCustomer, sql) = try recorder.recording { try TradeOrder.all.group(by: \.$customerId).count() }
            #expect(perCustomer == SwiftGroups.count(orders, by: \.customerId))
            #expect(perCustomer.keys.contains(nil), "the NULL group is keyed nil")
            #expect(sql.filter { $0.hasPrefix("SELECT") }.count == 1, "\(sql)")

            // Decimal? per employee (with a nil-employee group): exact.
            let freight: [Int64?: Decimal] = try TradeOrder.all.group(by: \.$employeeId).sum(\.$freight)
            #expect(freight == SwiftGroups.sum(orders, by: \.employeeId, \.freight))
            #expect(try TradeOrder.all.group(by: \.$employeeId).min(\.$freight) == SwiftGroups.min(orders, by: \.employeeId, \.freight))
            #expect(try TradeOrder.all.group(by: \.$employeeId).max(\.$freight) == SwiftGroups.max(orders, by: \.employeeId, \.freight))
            #expect(closeEnough(try TradeOrder.all.group(by: \.$employeeId).average(\.$freight),
                                SwiftGroups.average(orders, by: \.employeeId) { $0.freight?.double }))

            // Per customer: NULLF's freights are all NULL → sum 0, absent from min/max/average.
            let customerSums = try TradeOrder.all.group(by: \.$customerId).sum(\.$freight)
            #expect(customerSums == SwiftGroups.sum(orders, by: \.customerId, \.freight))
            #expect(customerSums["NULLF"] == 0)
            let customerMax = try TradeOrder.all.group(by: \.$customerId).max(\.$freight)
            #expect(customerMax == SwiftGroups.max(orders, by: \.customerId, \.freight))
            #expect(customerMax["NULLF"] == nil && customerMax.keys.contains("C001"))
            let customerMin = try TradeOrder.all.group(by: \.$customerId).min(\.$freight)
            #expect(customerMin == SwiftGroups.min(orders, by: \.customerId, \.freight))
            #expect(try TradeOrder.all.group(by: \.$customerId).average(\.$freight)["NULLF"] == nil)

            // Non-optional columns of several types.
            #expect(try TradeOrder.all.group(by: \.$shipCity).sum(\.$priority) == SwiftGroups.sum(orders, by: \.shipCity) { $0.priority })
            #expect(try TradeOrder.all.group(by: \.$shipCity).min(\.$orderDate) == SwiftGroups.min(orders, by: \.shipCity) { $0.orderDate })
            #expect(try TradeOrder.all.group(by: \.$shipCity).max(\.$orderDate) == SwiftGroups.max(orders, by: \.shipCity) { $0.orderDate })
            #expect(closeEnough(try TradeOrder.all.group(by: \.$shipCity).average(\.$priority),
                                SwiftGroups.average(orders, by: \.shipCity) { Double($0.priority) }))
            #expect(try TradeOrder.all.group(by: \.$shipped).count() == SwiftGroups.count(orders, by: \.shipped))
            #expect(try TradeOrder.all.group(by: \.$priority).max(\.$shipCity) == SwiftGroups.max(orders, by: \.priority, \.shipCity))
            #expect(try TradeOrder.all.group(by: \.$priority).min(\.$shipCity) == SwiftGroups.min(orders, by: \.priority, \.shipCity))

            // Optional Double.
            #expect(closeEnough(try TradeOrder.all.group(by: \.$shipCountry).sum(\.$weight),
                                SwiftGroups.sum(orders, by: \.shipCountry, \.weight)))
            #expect(try TradeOrder.all.group(by: \.$shipCountry).max(\.$weight) == SwiftGroups.max(orders, by: \.shipCountry, \.weight))
            #expect(closeEnough(try TradeOrder.all.group(by: \.$shipCountry).average(\.$weight),
                                SwiftGroups.average(orders, by: \.shipCountry, \.weight)))

            // Composite-key lines: Decimal, Int and Double columns per order.
            let lines = try TradeLine.findAll()
            #expect(try TradeLine.all.group(by: \.$orderId).sum(\.$unitPrice) == SwiftGroups.sum(lines, by: \.orderId) { $0.unitPrice })
            #expect(try TradeLine.all.group(by: \.$orderId).max(\.$unitPrice) == SwiftGroups.max(lines, by: \.orderId) { $0.unitPrice })
            #expect(try TradeLine.all.group(by: \.$productId).sum(\.$quantity) == SwiftGroups.sum(lines, by: \.productId) { $0.quantity })
            #expect(closeEnough(try TradeLine.all.group(by: \.$productId).average(\.$discount),
                                SwiftGroups.average(lines, by: \.productId) { $0.discount }))
        }
    }

    @Test func groupsOfFilteredJoinedAndLimitedQueries() throws {
        try withModelDB { _ in
            try ShopSeed.shop()
            try ShopSeed.music()
            let shop = try ShopSnapshot()
            let orders = shop.orders

            let shipped = orders.filter(\.shipped)
            #expect(try TradeOrder.where(\.$shipped == true).group(by: \.$customerId).count() == SwiftGroups.count(shipped, by: \.customerId))
            #expect(try TradeOrder.where(\.$shipped == true).group(by: \.$customerId).sum(\.$freight)
                == SwiftGroups.sum(shipped, by: \.customerId, \.freight))

            // Limited: the aggregates cover only the first 50 orders by date.
            let first50 = Array(orders.sorted { $0.orderDate != $1.orderDate ? $0.orderDate < $1.orderDate : $0.id! < $1.id! }.prefix(50))
            let limited = TradeOrder.all.order(by: \.$orderDate).order(by: \.$id).limit(50)
            #expect(try limited.group(by: \.$employeeId).count() == SwiftGroups.count(first50, by: \.employeeId))
            #expect(try limited.group(by: \.$employeeId).sum(\.$freight) == SwiftGroups.sum(first50, by: \.employeeId, \.freight))
            #expect(try limited.group(by: \.$employeeId).max(\.$freight) == SwiftGroups.max(first50, by: \.employeeId, \.freight))
            #expect(try limited.offset(20).group(by: \.$shipped).count()
                == SwiftGroups.count(Array(orders.sorted { $0.orderDate != $1.orderDate ? $0.orderDate < $1.orderDate : $0.id! < $1.id! }
                    .dropFirst(20).prefix(50)), by: \.shipped))

            // Joined: orders of French customers, per employee.
            let french = orders.filter { shop.customer($0.customerId)?.country == "France" }
            let frenchQuery = TradeOrder.all.joining(\.customer, where: \.$country == "France")
            #expect(try frenchQuery.group(by: \.$employeeId).sum(\.$freight) == SwiftGroups.sum(french, by: \.employeeId, \.freight))
            #expect(try frenchQuery.group(by: \.$employeeId).min(\.$freight) == SwiftGroups.min(french, by: \.employeeId, \.freight))
            #expect(try frenchQuery.limit(5).group(by: \.$shipCity).count()
                == SwiftGroups.count(Array(french.sorted { $0.id! < $1.id! }.prefix(5)), by: \.shipCity))
            // Customers with a big order, per country.
            let big = shop.customers.filter { c in shop.orders(of: c).contains { ($0.freight ?? 0) > 500 } }
            #expect(try TradeCustomer.all.joining(\.orders, where: \.$freight > 500).group(by: \.$country).count()
                == SwiftGroups.count(big, by: \.country))
            #expect(try TradeCustomer.all.joining(\.orders, where: \.$freight > 500).group(by: \.$country).sum(\.$creditLimit)
                == SwiftGroups.sum(big, by: \.country) { $0.creditLimit })

            // A relation's query, grouped; the many-to-many library.
            let customer = try #require(shop.customers.first { shop.orders(of: $0).count > 3 })
            #expect(try customer.orders.query.group(by: \.$shipCity).count() == SwiftGroups.count(shop.orders(of: customer), by: \.shipCity))
            let tracks = try TuneTrack.findAll()
            #expect(try TuneTrack.all.group(by: \.$genre).sum(\.$price) == SwiftGroups.sum(tracks, by: \.genre) { $0.price })
            #expect(try TuneTrack.all.group(by: \.$artistId).max(\.$seconds) == SwiftGroups.max(tracks, by: \.artistId) { $0.seconds })
            let playlist3 = try #require(try TunePlaylist.findFirst(where: ["name": "Playlist 3"]))
            let inThree = try playlist3.tracks.all()
            #expect(try TuneTrack.all.joining(\.playlists, where: \.$name == "Playlist 3").group(by: \.$genre).count()
                == SwiftGroups.count(inThree, by: \.genre))

            // Nothing matches: empty dictionaries.
            let none = TradeOrder.where(\.$priority > 100)
            #expect(try none.group(by: \.$customerId).count().isEmpty)
            #expect(try none.group(by: \.$customerId).sum(\.$freight).isEmpty)
            #expect(try none.group(by: \.$customerId).max(\.$freight).isEmpty)
            #expect(try none.group(by: \.$customerId).average(\.$priority).isEmpty)
        }
    }

    @Test func decimalAggregatesAreExactAndNumeric() throws {
        try withModelDB { _ in
            try ShopSeed.shop(orders: 0)
            let values: [(Int?, String?)] = [(1, "0.1"), (1, "0.2"), (2, "1000.5"), (2, "20"), (2, "3"),
                                               (3, nil), (3, nil), (nil, "99999999999999999.99"), (nil, "0.01")]
            for (group, freight) in values {
                let order = TradeOrder()
                order.priority = group ?? 0
                order.freight = freight.flatMap { Decimal(string: $0) }
                try order.save()
            }
            let sums = try TradeOrder.all.group(by: \.$priority).sum(\.$freight)
            #expect(sums[1] == Decimal(string: "0.3"), "0.1 + 0.2 is exactly 0.3: \(sums)")
            #expect(sums[2] == Decimal(string: "1023.5"))
            #expect(sums[3] == 0, "an all-NULL group sums to 0")
            #expect(sums[0] == Decimal(string: "100000000000000000"))
            let maxima = try TradeOrder.all.group(by: \.$priority).max(\.$freight)
            #expect(maxima[2] == Decimal(string: "1000.5"), "numbers, not text: \(maxima)")
            #expect(maxima[3] == nil && maxima.count == 3)
            let minima = try TradeOrder.all.group(by: \.$priority).min(\.$freight)
            #expect(minima[2] == 3 && minima[0] == Decimal(string: "0.01"))
            let averages = try TradeOrder.all.group(by: \.$priority).average(\.$freight)
            #expect(averages[3] == nil && abs(averages[2]! - 1023.5 / 3) < 1e-9)
            // The same over the whole table.
            #expect(try TradeOrder.where(\.$priority == 1).sum(\.$freight) == Decimal(string: "0.3"))
            #expect(try TradeOrder.all.max(\.$freight) == Decimal(string: "99999999999999999.99"))
            #expect(try TradeOrder.where(\.$priority == 2).min(\.$freight) == 3)
            #expect(try TradeOrder.where(\.$priority == 3).sum(\.$freight) == 0)
            #expect(try TradeOrder.where(\.$priority == 3).max(\.$freight) == nil)
        }
    }

    @Test func limitedAggregatesOfTheRowidOfAKeylessTable() throws {
        try withModelDB { db in
            try db.execute("CREATE TABLE group_keyless (name TEXT NOT NULL, n INTEGER NOT NULL)")
            for index in 0..<10 { try db.execute("INSERT INTO group_keyless VALUES (?, ?)", ["g\(index % 3)", index]) }
            let rows = try GroupKeyless.findAll()
            let first5 = Array(rows.prefix(5))
            // A subquery of `SELECT *` would not carry the rowid: these were nil / empty.
            let top: Int64?? = try GroupKeyless.all.limit(5).max(\.$id)
            #expect(top == .some(first5.compactMap(\.id).max()))
            #expect(try GroupKeyless.all.limit(5).group(by: \.$name).max(\.$id) == SwiftGroups.max(first5, by: \.name) { $0.id })
            #expect(try GroupKeyless.all.order(by: \.$n, .descending).limit(4).group(by: \.$name).sum(\.$n)
                == SwiftGroups.sum(Array(rows.sorted { $0.n > $1.n }.prefix(4)), by: \.name) { $0.n })
            #expect(try GroupKeyless.all.limit(5).count(\.$id) == 5)
        }
    }

    @Test func asyncGroupedTerminals() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("groups.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try ShopSeed.shop(orders: 150)
            let orders = try await TradeOrder.findAll()
            let grouped = TradeOrder.all.group(by: \.$employeeId)
            let count = try await grouped.count()
            #expect(count == SwiftGroups.count(orders, by: \.employeeId))
            let sum = try await grouped.sum(\.$freight)
            #expect(sum == SwiftGroups.sum(orders, by: \.employeeId, \.freight))
            let sumInt = try await grouped.sum(\.$priority)
            #expect(sumInt == SwiftGroups.sum(orders, by: \.employeeId) { $0.priority })
            let min = try await grouped.min(\.$freight)
            #expect(min == SwiftGroups.min(orders, by: \.employeeId, \.freight))
            let minDate = try await grouped.min(\.$orderDate)
            #expect(minDate == SwiftGroups.min(orders, by: \.employeeId) { $0.orderDate })
            let max = try await grouped.max(\.$freight)
            #expect(max == SwiftGroups.max(orders, by: \.employeeId, \.freight))
            let maxInt = try await grouped.max(\.$priority)
            #expect(maxInt == SwiftGroups.max(orders, by: \.employeeId) { $0.priority })
            let average = try await grouped.average(\.$weight)
            #expect(closeEnough(average, SwiftGroups.average(orders, by: \.employeeId, \.weight)))
            let averageInt = try await grouped.average(\.$priority)
            #expect(closeEnough(averageInt, SwiftGroups.average(orders, by: \.employeeId) { Double($0.priority) }))
            let joined = try await TradeOrder.all.joining(\.customer, where: \.$country == "USA").group(by: \.$shipCity).count()
            let customers = try await TradeCustomer.findAll()
            #expect(joined == SwiftGroups.count(orders.filter { o in customers.contains { $0.code == o.customerId && $0.country == "USA" } },
                                                by: \.shipCity))
        }
    }

    // MARK: Keys stored in several forms

    @Test func groupsWhoseStoredKeysReadAsOneKeyAreMerged() throws {
        try withModelDB { db in
            try TimedEvent.createTable()
            // One instant in two stored forms, and another instant.
            try db.execute("""
                INSERT INTO timed_event (at, amount, price) VALUES
                  ('2024-01-01 00:00:00.000', 1, 2.0), ('2024-01-01T00:00:00Z', 10, 4.0),
                  ('2024-01-01 00:00:00.000', 100, NULL), ('2024-02-01 00:00:00.000', 5, 1.0)
                """)
            let january = try #require(Date.fromDatabaseValue(.text("2024-01-01 00:00:00"), in: ValueContext()))
            let february = try #require(Date.fromDatabaseValue(.text("2024-02-01 00:00:00"), in: ValueContext()))
            let grouped = TimedEvent.all.group(by: \.$at)
            #expect(try grouped.count() == [january: 3, february: 1])
            #expect(try grouped.sum(\.$amount) == [january: 111, february: 5])
            #expect(try grouped.min(\.$amount) == [january: 1, february: 5])
            #expect(try grouped.max(\.$amount) == [january: 100, february: 5])
            // Averages weighted by how many values each stored form had: (2 + 4) / 2, not 3 of 3.
            #expect(try grouped.average(\.$price) == [january: 3.0, february: 1.0])
            #expect(try grouped.average(\.$amount) == [january: 37.0, february: 5.0])
        }
    }
}

/// A table without a declared key: `id` is its rowid.
final class GroupKeyless: ModelTestRecord {
    override class var primaryKey: String { "rowid" }
    @Column var name: String = ""
    @Column var n: Int = 0
}

/// Events grouped by a date stored in two text forms (groupsWhoseStoredKeysReadAsOneKeyAreMerged).
final class TimedEvent: ModelTestRecord {
    @Column var at: Date = Date(timeIntervalSince1970: 0)
    @Column var amount: Int = 0
    @Column var price: Double? = nil
}
