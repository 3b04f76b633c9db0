import Foundation
import Testing
@testable import ActiveObjects

/// Predicate operators on columns (== != < <= > >= && || !), checked against Swift.
@Suite struct PredicateTests {
    typealias P = QueryPerson

    private func check(_ rows: [QueryRow], _ label: String, _ predicate: QueryPredicate<P>,
                       _ expected: (QueryRow) -> Bool) throws {
        let got = try P.where(predicate).order(by: "id").all().map { $0.id ?? -1 }
        let want = rows.filter(expected).map(\.id)
        #expect(got == want, "\(label)")
        #expect(try P.all.where(predicate).count() == want.count, "\(label) count")
    }

    /// Kept out of the test closure: key-path literals inside it crash the 6.3 compiler's
    /// SendNonSendable pass.
    private func checkAllOperators(_ rows: [QueryRow]) throws {
        let age = rows[10].age, score = rows[20].score, name = rows[30].name
        try check(rows, "==", \.$age == age, { $0.age == age })
        try check(rows, "!=", \.$age != age, { $0.age != age })
        try check(rows, "<", \.$age < age, { $0.age < age })
        try check(rows, "<=", \.$age <= age, { $0.age <= age })
        try check(rows, ">", \.$age > age, { $0.age > age })
        try check(rows, ">=", \.$age >= age, { $0.age >= age })
        try check(rows, "score <", \.$score < score, { $0.score < score })
        try check(rows, "name ==", \.$name == name, { $0.name == name })
        try check(rows, "bool ==", \.$active == false, { !$0.active })
        try check(rows, "&&", \.$age > 20 && \.$active == true, { $0.age > 20 && $0.active })
        try check(rows, "||", \.$age < 10 || \.$score > 50.0, { $0.age < 10 || $0.score > 50 })
        try check(rows, "!", !(\.$age >= 45), { !($0.age >= 45) })
        try check(rows, "! &&", !(\.$age > 20 && \.$active == true), { !($0.age > 20 && $0.active) })
        try check(rows, "nested", (\.$age > 30 || \.$level < 0) && !(\.$name == name) && \.$score >= -50.0,
              { ($0.age > 30 || $0.level < 0) && $0.name != name && $0.score >= -50 })
        try check(rows, "precedence", \.$age < 20 || \.$age > 70 && \.$active == true,
              { $0.age < 20 || ($0.age > 70 && $0.active) })
        try check(rows, "== nil", \.$rating == nil, { $0.rating == nil })
        try check(rows, "!= nil", \.$rating != nil, { $0.rating != nil })
        try check(rows, "! == nil", !(\.$city == nil), { $0.city != nil })
        try check(rows, "nil ||", \.$rating == nil || \.$rating > 3.0, { $0.rating.map { $0 > 3 } ?? true })
        // SQL three-valued logic: comparisons with NULL are never true, even negated.
        try check(rows, "optional >", \.$rating > 3.0, { $0.rating.map { $0 > 3 } ?? false })
        try check(rows, "optional !=", \.$rating != 2.0, { $0.rating.map { $0 != 2 } ?? false })
        try check(rows, "! optional >", !(\.$rating > 3.0), { $0.rating.map { !($0 > 3) } ?? false })
        try check(rows, "sql", QueryPredicate<P>(sql: "age % ? = 0", 3), { $0.age % 3 == 0 })
        try check(rows, "sql && typed", QueryPredicate<P>(sql: "abs(level) > ?", 2) && \.$active == true, { abs(Int($0.level)) > 2 && $0.active })
    }

    @Test func everyPredicateOperatorMatchesSwift() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople(count: 60, seed: 7)
            try checkAllOperators(rows)
            #expect(rows.contains { $0.rating == nil } && rows.contains { ($0.rating ?? 0) > 3 })
        }
    }

    @Test func predicateSQLShape() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try QueryPerson.createTable()
            recorder.reset()
            _ = try P.where(!(\.$age > 1 && \.$name == "x") || \.$city == nil).count()
            #expect(recorder.statements == [
                #"SELECT count(*) FROM "query_person" WHERE (NOT (("age" > ? AND "name" = ?)) OR "city" IS NULL)"#,
            ])
        }
    }
}
