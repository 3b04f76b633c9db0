import Foundation
import Testing
@testable import ActiveObjects

final class PricedItem: ModelTestRecord {
    @Column var price: Decimal = 0
    @Column var discount: Decimal? = nil
}

/// Decimals are stored as exact text; queries must still compare and sort them as numbers
/// (as text, "65.83" > "500" and "100.5" < "20").
@Suite struct DecimalQueryTests {
    static let prices = ["65.83", "500", "100.5", "20", "9.99", "1000.01", "0.5"]

    static func seed() throws {
        try PricedItem.createTable()
        for (index, text) in prices.enumerated() {
            let item = PricedItem()
            item.price = Decimal(string: text)!
            item.discount = index.isMultiple(of: 2) ? Decimal(string: text)! / 10 : nil
            try item.save()
        }
    }

    @Test func rangeComparisonsAndOrderingAreNumeric() throws {
        try withModelDB { _ in
            try Self.seed()
            let all = Self.prices.map { Decimal(string: $0)! }
            for bound in ["500", "20", "0.5", "99.999"] {
                let limit = Decimal(string: bound)!
                #expect(Set(try PricedItem.where(\.$price > limit).pluck(\.$price)) == Set(all.filter { $0 > limit }), "> \(bound)")
                #expect(Set(try PricedItem.where(\.$price <= limit).pluck(\.$price)) == Set(all.filter { $0 <= limit }), "<= \(bound)")
                #expect(Set(try PricedItem.where(\.$price, .greaterOrEqual(limit)).pluck(\.$price)) == Set(all.filter { $0 >= limit }))
            }
            #expect(try PricedItem.all.order(by: \.$price).pluck(\.$price) == all.sorted())
            #expect(try PricedItem.all.order(by: \.$price, .descending).first()?.price == Decimal(string: "1000.01"))
            #expect(try PricedItem.all.max(\.$price) == Decimal(string: "1000.01"))
            #expect(try PricedItem.all.min(\.$price) == Decimal(string: "0.5"))
            #expect(try PricedItem.all.sum(\.$price) == all.reduce(0, +))
            #expect(try PricedItem.where(\.$discount > Decimal(5)).count() == all.enumerated().filter { $0.offset.isMultiple(of: 2) && $0.element / 10 > 5 }.count)
            // Equality stays exact.
            #expect(try PricedItem.where(\.$price == Decimal(string: "100.5")!).count() == 1)
        }
    }
}

final class M2MTrack: ModelTestRecord {
    @Column var title = ""
}
final class M2MPlaylist: ModelTestRecord {
    @Column var name = ""
    var tracks: HasManyThrough<M2MTrack> { hasMany(through: \M2MEntry.$playlistId, \M2MEntry.$trackId) }
}
final class M2MEntry: ModelTestRecord {
    override class var primaryKeys: [String] { ["playlistId", "trackId"] }
    @Column var playlistId: Int64 = 0
    @Column var trackId: Int64 = 0
}

@Suite struct ManyToManyEagerLoadingRegressionTests {
    /// The join model is only known at run time there: it must be loaded as itself, not as
    /// `ActiveObject` (which threw "the base class is not a model").
    @Test func includingAManyToManyRelationLoadsTheJoinModel() throws {
        try withModelDB { _ in
            try M2MTrack.createTable(); try M2MPlaylist.createTable(); try M2MEntry.createTable()
            let list = M2MPlaylist()
            list.name = "Mix"
            for title in ["b", "a"] {
                let track = M2MTrack()
                track.title = title
                try list.tracks.add(track)
            }
            let empty = M2MPlaylist()
            try empty.save()
            let lists = try M2MPlaylist.all.including(\.tracks).all()
            #expect(try lists.map { try $0.tracks.all().map(\.title) } == [["b", "a"], []])
        }
    }
}

final class RelaidOut: ModelTestRecord {
    override class var primaryKeys: [String] { ["a", "b"] }
    @Column var a = 0
    @Column var b = 0
    @Column var note = ""
}

@Suite struct TableLayoutTests {
    /// A table dropped and recreated WITHOUT ROWID through raw SQL is noticed (its rowid is gone).
    @Test func aTableRecreatedWithAnotherLayoutIsLookedAtAgain() throws {
        try withModelFileDB { db, _ in
            try RelaidOut.createTable()
            let row = RelaidOut()
            row.a = 1; row.b = 2; row.note = "x"
            try row.save()
            #expect(try RelaidOut.findAll().first?.id != nil)
            try db.execute("DROP TABLE relaid_out")
            try db.execute("CREATE TABLE relaid_out (a INTEGER NOT NULL, b INTEGER NOT NULL, note TEXT NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID")
            try db.execute("INSERT INTO relaid_out VALUES (3, 4, 'y')")
            let found = try RelaidOut.findAll()
            #expect(found.map(\.note) == ["y"])
            #expect(found.first?.id == nil)
        }
    }
}
