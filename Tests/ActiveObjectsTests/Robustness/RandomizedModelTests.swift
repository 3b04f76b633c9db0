import Foundation
import Testing
@testable import ActiveObjects

let fuzzDatabase = Locked<Database?>(nil)

final class FuzzItem: ActiveObject {
    override class var database: Database? { fuzzDatabase.withLock { $0 } }
    @Column var name: String = ""
    @Column var age: Int = 0
    @Column var score: Double? = nil
    @Column var flag: Bool = false
    @Column var tag: String? = nil
    /// The owner (see RandomizedRelationTests); NULL in the operations above.
    @Column var ownerId: Int64? = nil
    var owner: BelongsTo<FuzzOwner> { belongsTo(\.$ownerId) }
}

/// What the test believes a row holds.
struct ShadowRow: Equatable {
    var name: String
    var age: Int
    var score: Double?
    var flag: Bool
    var tag: String?

    init(_ item: FuzzItem) {
        (name, age, score, flag, tag) = (item.name, item.age, item.score, item.flag, item.tag)
    }
}

/// A random predicate together with its meaning, evaluated in Swift with SQL's three-valued
/// logic (nil = unknown), so that the database's answer can be checked.
struct RandomCondition {
    let predicate: QueryPredicate<FuzzItem>
    let evaluate: (ShadowRow) -> Bool?
    let text: String
}

/// Thousands of random saves, updates, deletes and composed queries, checked against an
/// in-memory model of the expected rows. A mismatch reports the seed and the step.
@Suite("Randomized model operations", .serialized)
struct RandomizedModelTests {
    static let names = ["ann", "bob", "cid", "dee", "eve", "joe", "jo", "o'hara", "x\"y", "100%", "a_b", ""]
    static let tags: [String?] = [nil, "red", "green", "blue", "--", "/*"]

    @Test(arguments: [UInt64(20_261_122), 7, 424_242])
    func randomOperationsMatchTheExpectedRows(seed: UInt64) throws {
        let database = try Database.inMemory()
        fuzzDatabase.withLock { $0 = database }
        defer { fuzzDatabase.withLock { $0 = nil } }
        try FuzzItem.createTable()

        var random = SeededGenerator(seed: seed)
        var shadow: [Int64: ShadowRow] = [:]
        let steps = 2_500
        var queriesChecked = 0

        func fill(_ item: FuzzItem) {
            item.name = Self.names.randomElement(using: &random)!
            item.age = Int.random(in: -5...60, using: &random)
            item.score = Bool.random(using: &random) ? nil : Double(Int.random(in: -20...20, using: &random)) / 4
            item.flag = Bool.random(using: &random)
            item.tag = Self.tags.randomElement(using: &random)!
        }

        for step in 0..<steps {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<35:   // insert
                let item = FuzzItem()
                fill(item)
                try item.save()
                let id = try #require(item.id, "\(context): no id after insert")
                shadow[id] = ShadowRow(item)
            case 35..<55:  // update some fields of an existing row
                guard let id = shadow.keys.sorted().randomElement(using: &random) else { continue }
                let item = try #require(try FuzzItem.find(id: id), "\(context): row \(id) missing")
                #expect(ShadowRow(item) == shadow[id], "\(context): row \(id) differs before update")
                if Bool.random(using: &random) { item.age = Int.random(in: -5...60, using: &random) }
                if Bool.random(using: &random) { item.tag = Self.tags.randomElement(using: &random)! }
                if Bool.random(using: &random) { item.score = nil }
                try item.save()
                shadow[id] = ShadowRow(item)
            case 55..<63:  // delete one object
                guard let id = shadow.keys.sorted().randomElement(using: &random) else { continue }
                let item = try #require(try FuzzItem.find(id: id))
                #expect(try item.delete(), "\(context): delete of \(id) found no row")
                shadow[id] = nil
            case 63..<68:  // delete by criteria
                let age = Int.random(in: -5...60, using: &random)
                let removed = try FuzzItem.delete(where: ["age": age])
                let expected = shadow.filter { $0.value.age == age }
                #expect(removed == expected.count, "\(context): delete(where: age = \(age))")
                for id in expected.keys { shadow[id] = nil }
            default:       // a composed query
                let condition = randomCondition(depth: 0, using: &random)
                let descending = Bool.random(using: &random)
                let limit = Bool.random(using: &random) ? Int.random(in: 0...8, using: &random) : nil
                let offset = Bool.random(using: &random) ? Int.random(in: 0...5, using: &random) : nil
                var query = FuzzItem.where(condition.predicate).order(by: \.$age, descending ? .descending : .ascending)
                    .order(by: "id")
                if let limit { query = query.limit(limit) }
                if let offset { query = query.offset(offset) }

                var expected = shadow.filter { condition.evaluate($0.value) == true }
                    .sorted { lhs, rhs in
                        if lhs.value.age != rhs.value.age {
                            return descending ? lhs.value.age > rhs.value.age : lhs.value.age < rhs.value.age
                        }
                        return lhs.key < rhs.key
                    }
                    .map(\.key)
                expected = Array(expected.dropFirst(offset ?? 0))
                if let limit { expected = Array(expected.prefix(limit)) }
                let actual = try query.all().map { $0.id! }
                #expect(actual == expected, "\(context): \(condition.text) limit \(limit as Any) offset \(offset as Any)")
                #expect(try query.count() == expected.count, "\(context): count of \(condition.text)")
                queriesChecked += 1
            }
        }

        // Finally the whole table equals the shadow, row for row.
        let all = try FuzzItem.findAll()
        #expect(all.count == shadow.count, "seed \(seed): final row count")
        for item in all {
            #expect(shadow[item.id!] == ShadowRow(item), "seed \(seed): final row \(item.id!)")
        }
        print("RELIABILITY randomized seed \(seed): \(steps) operations, \(queriesChecked) composed queries checked, \(shadow.count) rows at the end")
    }

    func randomCondition(depth: Int, using random: inout SeededGenerator) -> RandomCondition {
        let choice = depth >= 2 ? Int.random(in: 0..<9, using: &random) : Int.random(in: 0..<12, using: &random)
        switch choice {
        case 0:
            let age = Int.random(in: -5...60, using: &random)
            return RandomCondition(predicate: \FuzzItem.$age > age, evaluate: { $0.age > age }, text: "age > \(age)")
        case 1:
            let age = Int.random(in: -5...60, using: &random)
            return RandomCondition(predicate: \FuzzItem.$age <= age, evaluate: { $0.age <= age }, text: "age <= \(age)")
        case 2:
            let name = Self.names.randomElement(using: &random)!
            return RandomCondition(predicate: \FuzzItem.$name == name, evaluate: { $0.name == name }, text: "name == \(name)")
        case 3:
            let score = Double(Int.random(in: -20...20, using: &random)) / 4
            return RandomCondition(predicate: \FuzzItem.$score >= score,
                                   evaluate: { $0.score.map { $0 >= score } }, text: "score >= \(score)")
        case 4:
            return RandomCondition(predicate: \FuzzItem.$score == nil, evaluate: { $0.score == nil }, text: "score IS NULL")
        case 5:
            let tag = Self.tags.randomElement(using: &random)!
            return RandomCondition(predicate: \FuzzItem.$tag != tag,
                                   evaluate: { row in tag == nil ? row.tag != nil : row.tag.map { $0 != tag } },
                                   text: "tag != \(tag ?? "nil")")
        case 6:
            let flag = Bool.random(using: &random)
            return RandomCondition(predicate: \FuzzItem.$flag == flag, evaluate: { $0.flag == flag }, text: "flag == \(flag)")
        case 7:
            let ages = (0..<Int.random(in: 0...4, using: &random)).map { _ in Int.random(in: -5...60, using: &random) }
            return RandomCondition(predicate: QueryPredicate(.inList(.path(\FuzzItem.$age), ages)),
                                   evaluate: { ages.contains($0.age) }, text: "age IN \(ages)")
        case 8:
            let prefix = ["j", "a", "o", "x"].randomElement(using: &random)!
            return RandomCondition(predicate: QueryPredicate(.like(.path(\FuzzItem.$name), prefix + "%")),
                                   evaluate: { $0.name.lowercased().hasPrefix(prefix) }, text: "name LIKE \(prefix)%")
        case 9:
            let a = randomCondition(depth: depth + 1, using: &random), b = randomCondition(depth: depth + 1, using: &random)
            return RandomCondition(predicate: a.predicate && b.predicate, evaluate: { row -> Bool? in
                switch (a.evaluate(row), b.evaluate(row)) {
                case (false?, _), (_, false?): return false
                case (true?, true?): return true
                default: return nil
                }
            }, text: "(\(a.text) AND \(b.text))")
        case 10:
            let a = randomCondition(depth: depth + 1, using: &random), b = randomCondition(depth: depth + 1, using: &random)
            return RandomCondition(predicate: a.predicate || b.predicate, evaluate: { row -> Bool? in
                switch (a.evaluate(row), b.evaluate(row)) {
                case (true?, _), (_, true?): return true
                case (false?, false?): return false
                default: return nil
                }
            }, text: "(\(a.text) OR \(b.text))")
        default:
            let a = randomCondition(depth: depth + 1, using: &random)
            return RandomCondition(predicate: !a.predicate, evaluate: { row in a.evaluate(row).map { !$0 } },
                                   text: "NOT \(a.text)")
        }
    }
}
