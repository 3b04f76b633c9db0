import Foundation
import Testing
@testable import ActiveObjects

/// `distinct()` with `all`, `pluck`, `count` and `count(_:)`, compared with Swift.
@Suite struct DistinctTests {
    /// Distinct values in SQLite's ascending order (NULL first).
    static func ascending<T: Hashable & Comparable>(_ values: [T?]) -> [T?] {
        let set = Set(values)
        return (set.contains(nil) ? [nil] : []) + set.compactMap { $0 }.sorted().map { Optional($0) }
    }

    @Test func distinctPluckAndCountMatchSwift() throws {
        try withModelDB { _ in
            try ShopSeed.shop()
            let shop = try ShopSnapshot()
            let orders = shop.orders

            let cities: [String?] = try TradeOrder.all.distinct().pluck(\.$shipCity)
            #expect(cities.count == Set(cities).count, "each city once: \(cities)")
            #expect(Set(cities) == Set(orders.map(\.shipCity)))
            #expect(cities.contains(nil))
            #expect(try TradeOrder.all.pluck(\.$shipCity).count == orders.count, "without distinct: every row")

            // count(column) counts non-NULL values; after distinct(), distinct ones.
            #expect(try TradeOrder.all.count(\.$shipCity) == orders.compactMap(\.shipCity).count)
            #expect(try TradeOrder.all.distinct().count(\.$shipCity) == Set(orders.compactMap(\.shipCity)).count)
            #expect(try TradeOrder.all.count(\.$freight) == orders.compactMap(\.freight).count)
            #expect(try TradeOrder.all.distinct().count(\.$priority) == Set(orders.map(\.priority)).count)
            #expect(try TradeOrder.all.count(\.$id) == orders.count)

            // Objects are distinct rows already: all() and count() are unchanged.
            #expect(sortedIDs(try TradeOrder.all.distinct().all()) == sortedIDs(orders))
            #expect(try TradeOrder.all.distinct().count() == orders.count)
            #expect(try TradeOrder.all.distinct().order(by: \.$id).limit(7).count() == 7)

            // Ordered and limited: the limit applies to the distinct values.
            let ordered = Self.ascending(orders.map(\.shipCity))
            #expect(try TradeOrder.all.distinct().order(by: \.$shipCity).pluck(\.$shipCity) == ordered)
            #expect(try TradeOrder.all.distinct().order(by: \.$shipCity, .descending).limit(3).pluck(\.$shipCity)
                == Array(ordered.reversed().prefix(3)))
            #expect(try TradeOrder.all.distinct().order(by: \.$shipCity).limit(3).offset(1).pluck(\.$shipCity)
                == Array(ordered.dropFirst().prefix(3)))
            // count(column) agrees with pluck under the same limit.
            let firstThree = try TradeOrder.all.distinct().order(by: \.$shipCity).limit(3).pluck(\.$shipCity)
            #expect(try TradeOrder.all.distinct().order(by: \.$shipCity).limit(3).count(\.$shipCity) == firstThree.compactMap { $0 }.count)
            #expect(try TradeOrder.all.distinct().order(by: \.$priority).limit(2).count(\.$priority) == 2)

            // Other types.
            #expect(try TradeOrder.all.distinct().order(by: \.$priority).pluck(\.$priority) == Set(orders.map(\.priority)).sorted())
            #expect(Set(try TradeOrder.all.distinct().pluck(\.$shipped)) == Set(orders.map(\.shipped)))
            #expect(try TradeOrder.all.distinct().pluck(\.$shipped).count == Set(orders.map(\.shipped)).count)
            let freights = try TradeOrder.all.distinct().pluck(\.$freight)
            #expect(freights.count == Set(orders.map(\.freight)).count && Set(freights) == Set(orders.map(\.freight)))
            #expect(try TradeOrder.all.distinct().pluck(\.$customerId).count == Set(orders.map(\.customerId)).count)

            // Filtered and joined.
            let french = orders.filter { shop.customer($0.customerId)?.country == "France" }
            let frenchCities = try TradeOrder.all.joining(\.customer, where: \.$country == "France").distinct().pluck(\.$shipCity)
            #expect(frenchCities.count == Set(frenchCities).count && Set(frenchCities) == Set(french.map(\.shipCity)))
            #expect(try TradeOrder.all.joining(\.customer, where: \.$country == "France").distinct().count(\.$shipCity)
                == Set(french.compactMap(\.shipCity)).count)
            let shipped = orders.filter(\.shipped)
            #expect(try TradeOrder.where(\.$shipped == true).distinct().order(by: \.$shipCountry).pluck(\.$shipCountry)
                == Self.ascending(shipped.map(\.shipCountry)))
            let customers = try TradeCustomer.all.joining(\.orders, where: \.$freight > 500).distinct().pluck(\.$country)
            #expect(Set(customers) == Set(shop.customers.filter { c in shop.orders(of: c).contains { ($0.freight ?? 0) > 500 } }.map(\.country)))
            #expect(customers.count == Set(customers).count)

            // Empty.
            #expect(try TradeOrder.where(\.$priority > 99).distinct().pluck(\.$shipCity).isEmpty)
            #expect(try TradeOrder.where(\.$priority > 99).distinct().count(\.$shipCity) == 0)
        }
    }

    @Test func distinctOverTheManyToManyLibrary() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("music.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try ShopSeed.music()
            let music = try MusicSnapshot()
            let listedGenres = music.tracks.filter { t in music.entries.contains { $0.trackId == t.id } }.map(\.genre)
            let genres = try await TuneTrack.all.joining(\.playlists).distinct().order(by: \.$genre).pluck(\.$genre)
            #expect(genres == Self.ascending(listedGenres))
            let count = try await TuneTrack.all.joining(\.playlists).distinct().count(\.$genre)
            #expect(count == Set(listedGenres.compactMap { $0 }).count)
            let prices = try await TuneTrack.all.distinct().order(by: \.$seconds).limit(5).pluck(\.$seconds)
            #expect(prices == Array(Set(music.tracks.map(\.seconds)).sorted().prefix(5)))
        }
    }
}
