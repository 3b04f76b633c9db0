import Foundation
import Testing
@testable import ActiveObjects

/// Chainable queries (API.md §5), checked against expectations computed in Swift.
@Suite struct QueryTests {
    typealias P = QueryPerson

    private func ids(_ people: [P]) -> [Int64] { people.map { $0.id ?? -1 } }
    private func ids(_ rows: [QueryRow]) -> [Int64] { rows.map(\.id) }

    /// SQL LIKE without ESCAPE: `%` any run, `_` one character, ASCII case-insensitive.
    private func like(_ text: String, _ pattern: String) -> Bool {
        func fold(_ c: Character) -> Character { c.isASCII ? Character(c.lowercased()) : c }
        let t = Array(text).map(fold), p = Array(pattern).map(fold)
        func match(_ i: Int, _ j: Int) -> Bool {
            if j == p.count { return i == t.count }
            if p[j] == "%" { return (i...t.count).contains { match($0, j + 1) } }
            guard i < t.count else { return false }
            return (p[j] == "_" || p[j] == t[i]) && match(i + 1, j + 1)
        }
        return match(0, 0)
    }

    @Test func everyColumnOperatorMatchesSwift() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople()
            #expect(rows.count == 50)
            let age = rows[17].age, score = rows[3].score, name = rows[5].name
            let cases: [(String, Query<P>, (QueryRow) -> Bool)] = [
                ("age equal", P.where(\.$age, .equal(age)), { $0.age == age }),
                ("age notEqual", P.where(\.$age, .notEqual(age)), { $0.age != age }),
                ("age less", P.where(\.$age, .less(age)), { $0.age < age }),
                ("age lessOrEqual", P.where(\.$age, .lessOrEqual(age)), { $0.age <= age }),
                ("age greater", P.where(\.$age, .greater(age)), { $0.age > age }),
                ("age greaterOrEqual", P.where(\.$age, .greaterOrEqual(age)), { $0.age >= age }),
                ("score less", P.where(\.$score, .less(score)), { $0.score < score }),
                ("score greaterOrEqual", P.where(\.$score, .greaterOrEqual(score)), { $0.score >= score }),
                ("level less 0", P.where(\.$level, .less(0)), { $0.level < 0 }),
                ("name equal", P.where(\.$name, .equal(name)), { $0.name == name }),
                ("name notEqual", P.where(\.$name, .notEqual(name)), { $0.name != name }),
                ("name greater", P.where(\.$name, .greater("M")), { $0.name > "M" }),
                ("active equal", P.where(\.$active, .equal(true)), { $0.active }),
                ("like j%", P.where(\.$name, .like("j%")), { like($0.name, "j%") }),
                ("like %A%", P.where(\.$name, .like("%A%")), { like($0.name, "%A%") }),
                ("like _o%", P.where(\.$name, .like("_o%")), { like($0.name, "_o%") }),
                ("like %\\%%", P.where(\.$name, .like("50%")), { like($0.name, "50%") }),
                ("in ages", P.where(\.$age, .in([rows[0].age, rows[1].age, 1000])), {
                    [rows[0].age, rows[1].age].contains($0.age) }),
                ("in names", P.where(\.$name, .in([rows[2].name, "nobody"])), { $0.name == rows[2].name }),
                ("in empty", P.where(\.$age, .in([])), { _ in false }),
                ("rating isNull", P.where(\.$rating, .isNull), { $0.rating == nil }),
                ("rating notNull", P.where(\.$rating, .notNull), { $0.rating != nil }),
                ("city isNull", P.where(\.$city, .isNull), { $0.city == nil }),
                ("rating equal nil", P.where(\.$rating, .equal(nil)), { $0.rating == nil }),
                ("rating notEqual nil", P.where(\.$rating, .notEqual(nil)), { $0.rating != nil }),
                // SQL semantics: a comparison with NULL is not true, so NULL rows never match.
                ("rating equal 2.5", P.where(\.$rating, .equal(2.5)), { $0.rating == 2.5 }),
                ("rating notEqual 2.5", P.where(\.$rating, .notEqual(2.5)), { $0.rating != nil && $0.rating != 2.5 }),
                ("rating greater 2", P.where(\.$rating, .greater(2)), { ($0.rating ?? -1) > 2 }),
                ("rating in", P.where(\.$rating, .in([1, 2, nil])), { $0.rating == nil || $0.rating == 1 || $0.rating == 2 }),
                ("city like p%", P.where(\.$city, .like("p%")), { $0.city.map { like($0, "p%") } ?? false }),
            ]
            for (label, query, expected) in cases {
                let got = try ids(query.order(by: "id").all())
                let want = ids(rows.filter(expected))
                #expect(got == want, "\(label)")
                #expect(try query.count() == want.count, "\(label) count")
                #expect(try query.exists() == !want.isEmpty, "\(label) exists")
            }
            // The data set exercises both sides of the interesting cases.
            #expect(rows.contains { $0.rating == nil } && rows.contains { $0.rating != nil })
            #expect(rows.filter { like($0.name, "j%") }.count > 3)
        }
    }

    @Test func criteriaFragmentsTypedAndPredicateFiltersAreANDed() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople()
            let query = P.where(["active": true])
                .where("age >= ?", 18)
                .where(\.$name, .like("J%"))
                .where(\.$score > 0.0 || \.$rating == nil)
            let want = rows.filter {
                $0.active && $0.age >= 18 && like($0.name, "J%") && ($0.score > 0 || $0.rating == nil)
            }
            #expect(try ids(query.order(by: \.$age, .descending).order(by: "id").all())
                    == ids(want.sorted { ($0.age, -$0.id) > ($1.age, -$1.id) }))
            #expect(try P.all.where("age BETWEEN ? AND ?", arguments: [20, 40]).count() == rows.filter { (20...40).contains($0.age) }.count)
        }
    }

    @Test func orderingByTwoKeys() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople()
            let got = try P.all.order(by: \.$active).order(by: \.$age, .descending).all().map(QueryRow.init)
            let want = rows.sorted { a, b in
                a.active != b.active ? (!a.active && b.active) : a.age > b.age
            }
            #expect(got.map { [$0.active ? 1 : 0, $0.age] } == want.map { [$0.active ? 1 : 0, $0.age] })
            let byName = try P.order(by: "name", .descending).order(by: "id").pluck(\.$name)
            #expect(byName == rows.sorted { $0.name != $1.name ? $0.name > $1.name : $0.id < $1.id }.map(\.name))
            #expect(try ids(P.order(by: "id", .descending).all()) == ids(rows).reversed())
        }
    }

    @Test func limitOffsetAndOffsetWithoutLimit() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            let rows = try seedQueryPeople()
            let all = ids(rows)
            #expect(try ids(P.order(by: "id").limit(10).all()) == Array(all[0..<10]))
            #expect(try ids(P.order(by: "id").limit(10).offset(5).all()) == Array(all[5..<15]))
            #expect(try ids(P.order(by: "id").offset(45).all()) == Array(all[45...]))
            #expect(try ids(P.order(by: "id").offset(50).all()).isEmpty)
            #expect(try ids(P.order(by: "id").limit(0).all()).isEmpty)
            #expect(try P.order(by: "id").limit(10).offset(45).count() == 5, "count respects limit/offset")
            #expect(try P.all.offset(48).count() == 2)
            #expect(expectActiveObjectError { _ = try P.all.limit(-1).all() }?.isInvalidArgument == true)
            #expect(expectActiveObjectError { _ = try P.all.offset(-1).all() }?.isInvalidArgument == true)

            recorder.reset()
            _ = try P.order(by: \.$age).limit(3).offset(4).all()
            _ = try P.all.offset(4).all()
            #expect(recorder.statements == [
                #"SELECT "id", "name", "age", "score", "active", "rating", "city", "level" FROM "query_person" ORDER BY "age" LIMIT ? OFFSET ?"#,
                #"SELECT "id", "name", "age", "score", "active", "rating", "city", "level" FROM "query_person" LIMIT ? OFFSET ?"#,
            ])
        }
    }

    @Test func pageBoundaries() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople()
            let all = ids(rows)
            let query = P.order(by: "id")
            #expect(try ids(query.page(1, size: 15)) == Array(all[0..<15]))
            #expect(try ids(query.page(3, size: 15)) == Array(all[30..<45]))
            #expect(try ids(query.page(4, size: 15)) == Array(all[45..<50]), "last page is partial")
            #expect(try query.page(5, size: 15).isEmpty, "a page past the end is empty")
            #expect(try ids(query.page(1, size: 1000)) == all)
            #expect(try ids(query.where(\.$active == true).page(2, size: 5))
                    == Array(ids(rows.filter(\.active))[5..<10]))
            for (page, size) in [(0, 15), (-1, 15), (1, 0), (1, -3), (Int.max, 2)] {
                let error = expectActiveObjectError { _ = try query.page(page, size: size) }
                #expect(error?.isInvalidArgument == true, "page(\(page), size: \(size))")
            }
        }
    }

    @Test func firstAndEmptyQueries() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople()
            #expect(try P.where(\.$age > 1000).first() == nil)
            #expect(try P.where(\.$age > 1000).all().isEmpty)
            #expect(try P.where(\.$age > 1000).count() == 0)
            #expect(try P.where(\.$age > 1000).exists() == false)
            #expect(try P.where(\.$age > 1000).pluck(\.$name).isEmpty)
            let oldest = rows.max { ($0.age, -$0.id) < ($1.age, -$1.id) }!
            #expect(try P.order(by: \.$age, .descending).order(by: "id").first()?.id == oldest.id)
            #expect(try P.order(by: "id").first()?.id == rows[0].id)
        }
    }

    @Test func queriesAreLazyAndImmutable() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try QueryPerson.createTable()
            recorder.reset()
            let base = P.where(\.$age > 100)
            let ordered = base.order(by: \.$name).limit(5)
            _ = ordered.offset(1).where(["name": "x"])
            #expect(recorder.statements.isEmpty, "building a query runs no SQL")

            let late = P(); late.name = "Late"; late.age = 120
            try late.save()
            #expect(try base.count() == 1, "rows saved after building the query are seen")
            #expect(try ordered.all().map(\.name) == ["Late"])
            #expect(try base.where(["name": "Other"]).count() == 0)
            #expect(try base.count() == 1, "refining returned a new query; the base is unchanged")

            // A bad column in a built query is reported only when it runs.
            let bad = P.order(by: "nope")
            #expect(expectActiveObjectError { _ = try bad.all() }?.isUnknownColumn == true)
        }
    }

    @Test func countExistsAndDeleteOnQueries() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            let rows = try seedQueryPeople()
            let inactive = rows.filter { !$0.active }
            #expect(try P.where(\.$active == false).count() == inactive.count)
            #expect(try P.where(\.$active == false).exists())

            // Ordered + limited delete removes exactly the first rows of the ordering.
            let youngest3 = rows.sorted { ($0.age, $0.id) < ($1.age, $1.id) }.prefix(3)
            #expect(try P.order(by: \.$age).order(by: "id").limit(3).delete() == 3)
            let remaining = Set(try ids(P.findAll()))
            #expect(remaining == Set(ids(rows)).subtracting(youngest3.map(\.id)))

            recorder.reset()
            let deleted = try P.where(\.$active == false).delete()
            #expect(deleted == inactive.filter { !youngest3.map(\.id).contains($0.id) }.count)
            #expect(recorder.statements == [#"DELETE FROM "query_person" WHERE "active" = ?"#])
            #expect(try P.where(\.$active == false).exists() == false)
            #expect(try modelRowCount(db, "query_person") == remaining.count - deleted)
        }
    }

    @Test func pluckIsTyped() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople()
            let names: [String] = try P.order(by: "id").pluck(\.$name)
            let ratings: [Double?] = try P.order(by: "id").pluck(\.$rating)
            let levels: [Int8] = try P.order(by: "id").pluck(\.$level)
            let active: [Bool] = try P.order(by: "id").pluck(\.$active)
            #expect(names == rows.map(\.name))
            #expect(ratings == rows.map(\.rating))
            #expect(levels == rows.map(\.level))
            #expect(active == rows.map(\.active))
            #expect(try P.where(\.$age < 30).order(by: \.$age).limit(3).pluck(\.$age)
                    == Array(rows.map(\.age).filter { $0 < 30 }.sorted().prefix(3)))
        }
    }

    @Test func inListOf40000ValuesWorks() throws {
        try withModelDB { _ in
            let rows = try seedQueryPeople()
            let manyAges = Array(stride(from: 100_000, to: 140_000, by: 1)) + [rows[0].age, rows[1].age]
            #expect(manyAges.count > 32_766, "beyond SQLite's default variable limit")
            let want = ids(rows.filter { $0.age == rows[0].age || $0.age == rows[1].age })
            #expect(try ids(P.where(\.$age, .in(manyAges)).order(by: "id").all()) == want)
            #expect(try P.where(\.$age, .in(manyAges)).count() == want.count)
            #expect(try P.find(where: ["age": manyAges]).count == want.count)
            let ids40k = Array(Int64(0)..<40_000)
            #expect(try P.find(where: ["id": ids40k]).count == 50)
            #expect(try P.where(!(\.$age == -1)).where(\.$age, .in(manyAges)).count() == want.count)

            let manyNames = (0..<40_000).map { "name \($0) \"quoted\" \\ back\nline\t\u{1}" } + [rows[3].name]
            #expect(try P.where(\.$name, .in(manyNames)).count() == rows.filter { $0.name == rows[3].name }.count)
            let manyScores = (0..<40_000).map { Double($0) / 7 } + [rows[4].score]
            #expect(try P.where(\.$score, .in(manyScores)).count() == rows.filter { $0.score == rows[4].score }.count)
        }
    }

    @Test func longInListsMatchTrickyStringsExactly() throws {
        try withModelDB { _ in
            try QueryPerson.createTable()
            let tricky = ["quote\"s", "back\\slash", "new\nline", "tab\t", "ctl\u{1}\u{1f}", "emoji 😀", "é",
                          "", " ", "NULL", "null", "[1]", "\u{7f}", "a\u{2028}b", "nul\0byte"]
            for name in tricky { let p = P(); p.name = name; try p.save() }
            let padded = (0..<200).map { "pad\($0)" }
            for name in tricky {
                #expect(try P.where(\.$name, .in(padded + [name])).pluck(\.$name) == [name], "\(name.debugDescription)")
            }
            // Values JSON cannot carry (infinity) still match in a long list.
            let infinite = P(); infinite.name = "inf"; infinite.score = .infinity
            try infinite.save()
            let scores = (0..<200).map { Double($0) + 0.5 } + [.infinity]
            #expect(try P.where(\.$score, .in(scores)).pluck(\.$name) == ["inf"])
        }
    }

    @Test func sqlShapeUsesPlaceholdersAndQuotedIdentifiers() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try QueryPerson.createTable()
            recorder.reset()
            _ = try P.where(\.$age > 30 && \.$name == "Joe").order(by: \.$age, .descending).limit(2).offset(1).all()
            _ = try P.where(["age": [1, 2], "city": nil]).count()
            _ = try P.where(\.$rating == nil || \.$level != 3).exists()
            _ = try P.where(\.$name, .in([])).all()
            _ = try P.all.pluck(\.$name)
            #expect(recorder.statements == [
                #"SELECT "id", "name", "age", "score", "active", "rating", "city", "level" FROM "query_person" WHERE ("age" > ? AND "name" = ?) ORDER BY "age" DESC LIMIT ? OFFSET ?"#,
                #"SELECT count(*) FROM "query_person" WHERE ("age" IN (?, ?) AND "city" IS NULL)"#,
                #"SELECT EXISTS (SELECT 1 FROM "query_person" WHERE ("rating" IS NULL OR "level" <> ?))"#,
                #"SELECT "id", "name", "age", "score", "active", "rating", "city", "level" FROM "query_person" WHERE 0"#,
                #"SELECT "name", "id" FROM "query_person""#,
            ])
            for sql in recorder.statements {
                #expect(!sql.contains("Joe") && !sql.contains("30"), "values are bound, not spliced: \(sql)")
            }
        }
    }

    @Test func pageReplacesLimitAndOffsetAndNeverOverflows() throws {
        let db = try Database.inMemory()
        pagedTeamDatabase.withLock { $0 = db }
        defer { pagedTeamDatabase.withLock { $0 = nil } }
        try PagedTeam.createTable()
        try db.transaction { for i in 0..<50 { let team = PagedTeam(); team.name = "t\(i)"; try team.save() } }
        let query = PagedTeam.all.order(by: "id").limit(20).offset(40)
        #expect(try query.page(3, size: 20).map(\.name) == (40..<50).map { "t\($0)" })
        #expect(try query.page(2, size: 10).map(\.name) == (10..<20).map { "t\($0)" })
        #expect(throws: ActiveObjectError.self) { _ = try PagedTeam.all.offset(Int.max).page(Int.max, size: 2) }
        #expect(try PagedTeam.all.offset(Int.max).page(2, size: 1).map(\.name) == ["t1"])
    }

    @Test func dollarIDIsATypedColumnReference() throws {
        try withModelDB { _ in
            try PolishPerson.seed()
            #expect(try PolishPerson.all.order(by: \.$id, .descending).first()?.name == "Dee")
            #expect(try PolishPerson.where(\.$id > 2).pluck(\.$id) == [3, 4])
            #expect(try PolishPerson.where(\.$id, .in([1, 3])).pluck(\.$name) == ["Cid", "Bob"])
            #expect(try PolishPerson.all.max(\.$id) == .some(4))
        }
    }

    @Test func firstWithoutAnOrderIsTheSmallestKey() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try PolishPerson.seed()
            // Make the table's natural order differ from the key order.
            try PolishPerson.find(id: 1)?.delete()
            let cid = PolishPerson()
            cid.id = 1
            cid.name = "Cid again"
            cid.age = 35
            try cid.save()
            let (first, sql) = try recorder.recording { try PolishPerson.where(\.$age > 20).first() }
            #expect(first?.id == 1)
            #expect(sql.last?.contains("ORDER BY \"id\"") == true)
            #expect(try PolishPerson.all.order(by: \.$age).first()?.name == "Dee")
        }
    }
}

/// The database of `QueryTests.PagedTeam` (pageReplacesLimitAndOffsetAndNeverOverflows), set by that test.
private let pagedTeamDatabase = Locked<Database?>(nil)

extension QueryTests {
    final class PagedTeam: ActiveObject {
        override class var database: Database? { pagedTeamDatabase.withLock { $0 } }
        @Column var name = ""
    }
}
