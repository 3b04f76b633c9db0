import Foundation
import Testing
@testable import ActiveObjects

/// `joining(_:where:)` for each relation kind, every result compared with one computed in
/// Swift from `findAll()`.
@Suite struct JoiningTests {
    @Test func belongsToFiltersByTheParent() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try ShopSeed.shop()
            let shop = try ShopSnapshot()
            func expected(_ keep: (TradeCustomer) -> Bool) -> [Int64] {
                sortedIDs(shop.orders.filter { order in shop.customer(order.customerId).map(keep) ?? false })
            }
            let french = expected { $0.country == "France" }
            #expect(!french.isEmpty)
            let (found, sql) = try recorder.recording { try TradeOrder.all.joining(\.customer, where: \.$country == "France").all() }
            #expect(sortedIDs(found) == french)
            #expect(sql.filter { $0.hasPrefix("SELECT") }.count == 1, "one query: \(sql)")

            // Without a predicate: the orders whose customer exists; `== nil` is IS NULL.
            #expect(sortedIDs(try TradeOrder.all.joining(\.customer).all()) == expected { _ in true })
            #expect(sortedIDs(try TradeOrder.all.joining(\.customer, where: \.$country == nil).all()) == expected { $0.country == nil })
            #expect(sortedIDs(try TradeOrder.all.joining(\.customer, where: \.$country != "France" && \.$companyName != "Company 3").all())
                == expected { $0.country.map { $0 != "France" } == true && $0.companyName != "Company 3" })
            #expect(sortedIDs(try TradeOrder.all.joining(\.customer, where: \.$country == "USA" || \.$code == "C004").all())
                == expected { $0.country == "USA" || $0.code == "C004" })
            #expect(try TradeOrder.all.joining(\.customer, where: \.$country == "Atlantis").all().isEmpty)

            // A Decimal compared as a number, not as text ("2500" < "300" as text).
            #expect(sortedIDs(try TradeOrder.all.joining(\.customer, where: \.$creditLimit > 2500).all())
                == expected { $0.creditLimit > 2500 })

            // Combined with where, order, limit and offset.
            let shippedFrench = shop.orders.filter { $0.shipped && shop.customer($0.customerId)?.country == "France" }
                .sorted { $0.orderDate != $1.orderDate ? $0.orderDate > $1.orderDate : $0.id! < $1.id! }
            let page = try TradeOrder.where(\.$shipped == true).joining(\.customer, where: \.$country == "France")
                .order(by: \.$orderDate, .descending).order(by: \.$id).limit(5).offset(2).all()
            #expect(page.map { $0.id! } == shippedFrench.dropFirst(2).prefix(5).map { $0.id! })

            // count, exists, first.
            let germanQuery = TradeOrder.all.joining(\.customer, where: \.$country == "Germany")
            let german = expected { $0.country == "Germany" }
            #expect(try germanQuery.count() == german.count)
            #expect(try germanQuery.exists())
            #expect(try !TradeOrder.all.joining(\.customer, where: \.$country == "Atlantis").exists())
            #expect(try germanQuery.first()?.id == german.first)
            #expect(try germanQuery.limit(3).count() == min(3, german.count))

            // including: the parents are preloaded (no SQL on get()).
            let withCustomers = try germanQuery.including(\.customer).all()
            #expect(sortedIDs(withCustomers) == german)
            let (codes, getSQL) = try recorder.recording { try withCustomers.map { try $0.customer.get()?.code } }
            #expect(codes == withCustomers.map(\.customerId))
            #expect(getSQL.isEmpty, "preloaded parents: \(getSQL)")

            // delete removes exactly the expected rows (and their lines, by cascade).
            let brazil = expected { $0.country == "Brazil" }
            #expect(!brazil.isEmpty)
            #expect(try TradeOrder.all.joining(\.customer, where: \.$country == "Brazil").delete() == brazil.count)
            let after = try ShopSnapshot()
            #expect(sortedIDs(after.orders) == sortedIDs(shop.orders).filter { !brazil.contains($0) })
            #expect(after.lines.count == shop.lines.filter { !brazil.contains($0.orderId) }.count)
            #expect(after.customers.count == shop.customers.count)
        }
    }

    @Test func selfReferentialBelongsToAndHasMany() throws {
        try withModelDB { _ in
            try ShopSeed.shop(orders: 40)
            let employees = try TradeEmployee.findAll()
            let buchanan = try #require(employees.first { $0.lastName == "Buchanan" })
            let reportingToBuchanan = try TradeEmployee.all.joining(\.manager, where: \.$lastName == "Buchanan").all()
            #expect(sortedIDs(reportingToBuchanan) == sortedIDs(employees.filter { $0.reportsTo == buchanan.id }))
            let managers = try TradeEmployee.all.joining(\.reports).all()
            #expect(sortedIDs(managers) == sortedIDs(employees.filter { e in employees.contains { $0.reportsTo == e.id } }))
            let managersOfReps = try TradeEmployee.all.joining(\.reports, where: \.$title == "Representative").all()
            #expect(sortedIDs(managersOfReps) == sortedIDs(employees.filter { e in
                employees.contains { $0.reportsTo == e.id && $0.title == "Representative" }
            }))
            // Both directions at once: employees with a manager who has a title.
            let titledManager = try TradeEmployee.all.joining(\.manager, where: \.$title != nil).joining(\.orders).all()
            let orders = try TradeOrder.findAll()
            #expect(sortedIDs(titledManager) == sortedIDs(employees.filter { e in
                employees.contains { $0.id == e.reportsTo && $0.title != nil } && orders.contains { $0.employeeId == e.id }
            }))
        }
    }

    @Test func hasManyReturnsEachParentOnce() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try ShopSeed.shop()
            let shop = try ShopSnapshot()
            func expected(_ keep: (TradeOrder) -> Bool) -> [Int64] {
                sortedIDs(shop.customers.filter { shop.orders(of: $0).contains(where: keep) })
            }
            let big = try TradeCustomer.all.joining(\.orders, where: \.$freight > 500).all()
            #expect(allDistinct(big.map(\.code)))
            #expect(sortedIDs(big) == expected { ($0.freight ?? 0) > 500 })
            #expect(!big.isEmpty && big.count < shop.customers.count)
            #expect(sortedIDs(try TradeCustomer.all.joining(\.orders, where: \.$freight >= 500).all())
                == expected { $0.freight.map { $0 >= 500 } ?? false })
            #expect(sortedIDs(try TradeCustomer.all.joining(\.orders, where: \.$freight < 20).all())
                == expected { $0.freight.map { $0 < 20 } ?? false })

            // Without a predicate: customers with any order (NOORD has none); NULL freights.
            let any = try TradeCustomer.all.joining(\.orders).all()
            #expect(sortedIDs(any) == expected { _ in true })
            #expect(!any.contains { $0.code == "NOORD" })
            let nullFreight = try TradeCustomer.all.joining(\.orders, where: \.$freight == nil).all()
            #expect(sortedIDs(nullFreight) == expected { $0.freight == nil })
            #expect(nullFreight.contains { $0.code == "NULLF" })
            #expect(sortedIDs(try TradeCustomer.all.joining(\.orders, where: \.$shipCity == "Paris" && \.$priority >= 3).all())
                == expected { $0.shipCity == "Paris" && $0.priority >= 3 })
            #expect(sortedIDs(try TradeCustomer.all.joining(\.orders, where: !(\.$shipped == true)).all())
                == expected { !$0.shipped })

            // Combined with where / order / limit, count and exists.
            let query = TradeCustomer.where(\.$country != "France").joining(\.orders, where: \.$shipped == true && \.$weight > 20)
            let matching = shop.customers.filter { c in
                c.country.map { $0 != "France" } == true && shop.orders(of: c).contains { $0.shipped && ($0.weight ?? 0) > 20 }
            }.sorted { $0.companyName > $1.companyName }
            let (named, sql) = try recorder.recording { try query.order(by: \.$companyName, .descending).limit(4).all() }
            #expect(named.map(\.code) == matching.prefix(4).map(\.code))
            #expect(sql.filter { $0.hasPrefix("SELECT") }.count == 1)
            #expect(try query.count() == matching.count)
            #expect(try query.exists() == !matching.isEmpty)
            #expect(try query.pluck(\.$code).sorted() == matching.map(\.code).sorted())

            // Two relations at once, and including (which still loads every order, not only the matching ones).
            let vipShipping = try TradeCustomer.all.joining(\.orders, where: \.$shipped == true)
                .joining(\.profile, where: \.$vip == true).including(\.orders).all()
            let vipExpected = shop.customers.filter { c in
                shop.orders(of: c).contains { $0.shipped } && shop.profiles.contains { $0.customerCode == c.code && $0.vip }
            }
            #expect(vipShipping.map(\.code).sorted() == vipExpected.map(\.code).sorted())
            for customer in vipShipping {
                #expect(sortedIDs(try customer.orders.all()) == sortedIDs(shop.orders(of: customer)))
            }

            // A relation's own query, joined further.
            let customer = try #require(shop.customers.max { shop.orders(of: $0).count < shop.orders(of: $1).count })
            let bigLines = try customer.orders.query.joining(\.lines, where: \.$quantity > 30).all()
            #expect(sortedIDs(bigLines) == sortedIDs(shop.orders(of: customer).filter { o in shop.lines(of: o).contains { $0.quantity > 30 } }))

            // delete through a has-many: orders with a line of more than 55 items.
            let doomed = sortedIDs(shop.orders.filter { o in shop.lines(of: o).contains { $0.quantity > 55 } })
            #expect(!doomed.isEmpty)
            #expect(try TradeOrder.all.joining(\.lines, where: \.$quantity > 55).delete() == doomed.count)
            #expect(sortedIDs(try TradeOrder.findAll()) == sortedIDs(shop.orders).filter { !doomed.contains($0) })
            #expect(try TradeOrder.all.joining(\.lines, where: \.$quantity > 55).count() == 0)
        }
    }

    @Test func hasOneFiltersByTheChild() throws {
        try withModelDB { _ in
            try ShopSeed.shop(orders: 60)
            let shop = try ShopSnapshot()
            func expected(_ keep: (TradeProfile) -> Bool) -> [String] {
                shop.customers.filter { c in shop.profiles.contains { $0.customerCode == c.code && keep($0) } }.map(\.code).sorted()
            }
            #expect(try TradeCustomer.all.joining(\.profile, where: \.$vip == true).pluck(\.$code).sorted() == expected { $0.vip })
            #expect(try TradeCustomer.all.joining(\.profile).pluck(\.$code).sorted() == expected { _ in true })
            #expect(try TradeCustomer.all.joining(\.profile, where: \.$segment == nil).pluck(\.$code).sorted() == expected { $0.segment == nil })
            #expect(try TradeCustomer.all.joining(\.profile, where: QueryPredicate(sql: "segment LIKE ?", "whole%")).count()
                == expected { $0.segment?.hasPrefix("whole") == true }.count)
            // The other way: profiles with a customer, refined.
            let nonVIP = try TradeProfile.all.joining(\.customer).where(\.$vip == false).all()
            #expect(nonVIP.map(\.customerCode).sorted() == shop.profiles.filter { !$0.vip }.map(\.customerCode).sorted())
            // delete: customers without orders whose profile is a VIP one (profiles cascade).
            let doomed = shop.customers.filter { c in
                shop.orders(of: c).isEmpty && shop.profiles.contains { $0.customerCode == c.code && $0.vip }
            }
            let query = TradeCustomer.where("NOT EXISTS (SELECT 1 FROM Orders o WHERE o.CustomerID = Customers.CustomerID)")
                .joining(\.profile, where: \.$vip == true)
            #expect(try query.delete() == doomed.count)
            #expect(try TradeCustomer.count(where: ["CustomerID": doomed.map(\.code)]) == 0)
            #expect(try TradeCustomer.countAll() == shop.customers.count - doomed.count)
        }
    }

    @Test func manyToManyReturnsEachModelOnce() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try ShopSeed.music()
            let music = try MusicSnapshot()
            func playlists(_ keep: (TuneTrack) -> Bool) -> [Int64] {
                sortedIDs(music.playlists.filter { music.tracks(of: $0).contains(where: keep) })
            }
            let jazz = try TunePlaylist.all.joining(\.tracks, where: \.$genre == "Jazz").all()
            #expect(allDistinct(jazz.map { $0.id! }))
            #expect(sortedIDs(jazz) == playlists { $0.genre == "Jazz" })
            #expect(sortedIDs(try TunePlaylist.all.joining(\.tracks).all()) == playlists { _ in true })
            #expect(try !TunePlaylist.all.joining(\.tracks).all().contains { $0.name == "Playlist 9" })
            #expect(sortedIDs(try TunePlaylist.all.joining(\.tracks, where: \.$genre == nil && \.$seconds > 300).all())
                == playlists { $0.genre == nil && $0.seconds > 300 })
            #expect(sortedIDs(try TunePlaylist.all.joining(\.tracks, where: \.$price >= 1.5).all())
                == playlists { $0.price >= 1.5 })
            #expect(sortedIDs(try TunePlaylist.all.joining(\.tracks, where: QueryPredicate(.inList(.path(\TuneTrack.$genre), ["Rock", "Latin"]))).all())
                == playlists { ["Rock", "Latin"].contains($0.genre) })

            // The other side, and combined with a belongs-to of the target.
            let inThree = try TuneTrack.all.joining(\.playlists, where: \.$name == "Playlist 3").all()
            let three = try #require(music.playlists.first { $0.name == "Playlist 3" })
            #expect(sortedIDs(inThree) == sortedIDs(music.tracks(of: three)))
            let listed = try TuneTrack.all.joining(\.playlists).joining(\.artist, where: \.$name == "Artist 2")
                .order(by: \.$seconds).order(by: \.$id).all()
            let listedExpected = music.tracks.filter { t in
                music.entries.contains { $0.trackId == t.id } && music.artists.contains { $0.id == t.artistId && $0.name == "Artist 2" }
            }.sorted { $0.seconds != $1.seconds ? $0.seconds < $1.seconds : $0.id! < $1.id! }
            #expect(listed.map { $0.id! } == listedExpected.map { $0.id! })
            let artists = try TuneArtist.all.joining(\.tracks, where: \.$genre == "Blues").all()
            #expect(sortedIDs(artists) == sortedIDs(music.artists.filter { a in music.tracks.contains { $0.artistId == a.id && $0.genre == "Blues" } }))

            // count, exists, limit, including.
            let query = TunePlaylist.all.joining(\.tracks, where: \.$seconds > 500)
            let long = playlists { $0.seconds > 500 }
            #expect(try query.count() == long.count)
            #expect(try query.exists() == !long.isEmpty)
            #expect(try query.order(by: \.$id, .descending).limit(2).all().map { $0.id! } == Array(long.reversed().prefix(2)))
            let (loaded, sql) = try recorder.recording { try query.including(\.tracks).all() }
            #expect(sortedIDs(loaded) == long)
            #expect(sql.filter { $0.hasPrefix("SELECT") }.count <= 3, "\(sql)")
            for playlist in loaded { #expect(sortedIDs(try playlist.tracks.all()) == sortedIDs(music.tracks(of: playlist))) }

            // delete: tracks of Playlist 3 longer than 400 s (their entries cascade).
            let doomed = sortedIDs(music.tracks(of: three).filter { $0.seconds > 400 })
            #expect(try TuneTrack.where(\.$seconds > 400).joining(\.playlists, where: \.$name == "Playlist 3").delete() == doomed.count)
            let after = try MusicSnapshot()
            #expect(sortedIDs(after.tracks) == sortedIDs(music.tracks).filter { !doomed.contains($0) })
            #expect(after.entries.count == music.entries.filter { !doomed.contains($0.trackId) }.count)
        }
    }

    @Test func joiningModelsOfAnotherDatabaseThrows() throws {
        let other = try Database.inMemory()
        try withModelDB(second: other) { _ in
            try JoinHome.createTable()
            try ModelTestDB.$current.withValue(other) { try JoinAway.createTable() }
            let error = expectActiveObjectError { _ = try JoinHome.all.joining(\.aways).all() }
            #expect(error?.isInvalidArgument == true)
        }
    }

    @Test func asyncTerminalsOfJoiningAndDistinctQueries() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("shop.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try ShopSeed.shop(orders: 120)
            try ShopSeed.music()
            let shop = try ShopSnapshot()
            let music = try MusicSnapshot()
            let french = try await TradeOrder.all.joining(\.customer, where: \.$country == "France").all()
            #expect(sortedIDs(french) == sortedIDs(shop.orders.filter { shop.customer($0.customerId)?.country == "France" }))
            let bigCount = try await TradeCustomer.all.joining(\.orders, where: \.$freight > 500).count()
            #expect(bigCount == shop.customers.filter { c in shop.orders(of: c).contains { ($0.freight ?? 0) > 500 } }.count)
            let vip = try await TradeCustomer.all.joining(\.profile, where: \.$vip == true).exists()
            #expect(vip == shop.profiles.contains { $0.vip })
            let jazz = try await TunePlaylist.all.joining(\.tracks, where: \.$genre == "Jazz").all()
            #expect(sortedIDs(jazz) == sortedIDs(music.playlists.filter { music.tracks(of: $0).contains { $0.genre == "Jazz" } }))
            let cities = try await TradeOrder.all.distinct().pluck(\.$shipCity)
            #expect(Set(cities) == Set(shop.orders.map(\.shipCity)) && cities.count == Set(cities).count)
            let cityCount = try await TradeOrder.all.distinct().count(\.$shipCity)
            #expect(cityCount == Set(shop.orders.compactMap(\.shipCity)).count)
            let distinctRows = try await TradeOrder.all.distinct().count()
            #expect(distinctRows == shop.orders.count)
        }
    }
}

final class JoinHome: ModelTestRecord {
    @Column var name = ""
    var aways: HasMany<JoinAway> { hasMany(\.$homeId) }
}

final class JoinAway: ModelTestSecondRecord {
    @Column var homeId: Int64? = nil
}
