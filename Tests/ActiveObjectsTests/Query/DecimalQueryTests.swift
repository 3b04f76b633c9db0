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
