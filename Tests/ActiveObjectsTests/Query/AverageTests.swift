import Foundation
import Testing
@testable import ActiveObjects

/// `average` takes numeric columns only (text and dates do not compile: `.ci/check-strict`
/// proves it), optional ones included, NULLs ignored.
@Suite struct AverageTests {
    final class Score: ModelTestRecord {
        @Column var points = 0
        @Column var bonus: Double? = nil
        @Column var exact: Decimal = 0
    }

    @Test func averagesOfNumericAndOptionalNumericColumns() throws {
        try withModelDB { _ in
            try Score.createTable()
            #expect(try Score.all.average(\.$points) == nil)
            for (points, bonus) in [(1, 2.0), (2, nil), (6, 4.0)] as [(Int, Double?)] {
                let score = Score()
                score.points = points
                score.bonus = bonus
                score.exact = Decimal(points)
                try score.save()
            }
            #expect(try Score.all.average(\.$points) == 3)
            #expect(try Score.all.average(\.$bonus) == 3)
            #expect(try Score.all.average(\.$exact) == 3)
            #expect(try Score.where(\.$points > 100).average(\.$bonus) == nil)
        }
    }
}
