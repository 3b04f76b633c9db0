import Foundation
import Testing
@testable import ActiveObjects

/// sum / min / max / average against values computed in Swift.
@Suite struct AggregateTests {
    typealias P = QueryPerson

    @Test func aggregatesMatchSwift() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople()
            #expect(try P.all.sum(\.$age) == rows.map(\.age).reduce(0, +))
            #expect(try P.all.min(\.$age) == rows.map(\.age).min())
            #expect(try P.all.max(\.$age) == rows.map(\.age).max())
            let averageAge = try #require(try P.all.average(\.$age))
            #expect(abs(averageAge - Double(rows.map(\.age).reduce(0, +)) / Double(rows.count)) < 1e-9)

            #expect(abs(try P.all.sum(\.$score) - rows.map(\.score).reduce(0, +)) < 1e-6)
            #expect(try P.all.min(\.$score) == rows.map(\.score).min())
            #expect(try P.all.max(\.$score) == rows.map(\.score).max())
            #expect(try P.all.sum(\.$level) == rows.map(\.level).reduce(0, +))
            #expect(try P.all.min(\.$name) == rows.map(\.name).min())
            #expect(try P.all.max(\.$name) == rows.map(\.name).max())

            // Optional columns: NULLs are ignored.
            let ratings = rows.compactMap(\.rating)
            #expect(try P.all.sum(\.$rating) == ratings.reduce(0, +))
            let averageRating = try #require(try P.all.average(\.$rating))
            #expect(abs(averageRating - ratings.reduce(0, +) / Double(ratings.count)) < 1e-9)
            #expect(try P.all.max(\.$rating) == .some(ratings.max()))

            // Filtered, and limited (the aggregate covers only the limited rows).
            let active = rows.filter(\.active)
            #expect(try P.where(\.$active == true).sum(\.$age) == active.map(\.age).reduce(0, +))
            #expect(try P.where(\.$active == true).max(\.$age) == active.map(\.age).max())
            let firstTen = rows.sorted { $0.age != $1.age ? $0.age < $1.age : $0.id < $1.id }.prefix(10)
            #expect(try P.order(by: \.$age).order(by: "id").limit(10).sum(\.$age) == firstTen.map(\.age).reduce(0, +))
            #expect(try P.order(by: \.$age).order(by: "id").limit(10).max(\.$age) == firstTen.last?.age)
        }
    }

    @Test func aggregatesOfNoRows() throws {
        try withModelDB { _ in
            try QueryPerson.createTable()
            #expect(try P.all.sum(\.$age) == 0)
            #expect(try P.all.sum(\.$score) == 0)
            #expect(try P.all.sum(\.$rating) == 0)
            #expect(try P.all.min(\.$age) == nil)
            #expect(try P.all.max(\.$name) == nil)
            #expect(try P.all.average(\.$score) == nil)
            let onlyNulls = P(); try onlyNulls.save()
            #expect(try P.all.sum(\.$rating) == 0)
            #expect(try P.all.average(\.$rating) == nil)
        }
    }
}
