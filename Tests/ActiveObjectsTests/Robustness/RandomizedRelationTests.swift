import Foundation
import Testing
@testable import ActiveObjects

final class FuzzOwner: ActiveObject {
    override class var database: Database? { fuzzDatabase.withLock { $0 } }
    @Column var name: String = ""
    @Column var level: Int? = nil
    var items: HasMany<FuzzItem> { hasMany(\.$ownerId) }
    var badges: HasManyThrough<FuzzBadge> { hasMany(through: \FuzzOwnerBadge.$ownerId, \FuzzOwnerBadge.$badgeId) }
}

final class FuzzBadge: ActiveObject {
    override class var database: Database? { fuzzDatabase.withLock { $0 } }
    @Column var name: String = ""
    var owners: HasManyThrough<FuzzOwner> { hasMany(through: \FuzzOwnerBadge.$badgeId, \FuzzOwnerBadge.$ownerId) }
}

final class FuzzOwnerBadge: ActiveObject {
    override class var database: Database? { fuzzDatabase.withLock { $0 } }
    override class var primaryKeys: [String] { ["ownerId", "badgeId"] }
    override class var withoutRowID: Bool { true }
    @Column var ownerId: Int64 = 0
    @Column var badgeId: Int64 = 0
}

/// What the test believes an owner row holds.
struct OwnerShadow: Equatable {
    var name: String
    var level: Int?
}

/// A random predicate on owners and its meaning in three-valued logic.
struct OwnerCondition {
    let predicate: QueryPredicate<FuzzOwner>
    let evaluate: (OwnerShadow) -> Bool?
    let text: String
}

struct OwnerBadge: Hashable {
    var owner: Int64
    var badge: Int64
}

extension RandomizedModelTests {
    /// Random batch inserts, updateAll and deletes through relations, checked against an
    /// in-memory model; composed with random joining predicates, group(by:) aggregates and
    /// distinct plucks, each compared with the same computed in Swift.
    @Test(arguments: [UInt64(15), 2_026])
    func randomRelationsGroupsAndBatchWritesMatchTheExpectedRows(seed: UInt64) throws {
        let database = try Database.inMemory()
        fuzzDatabase.withLock { $0 = database }
        defer { fuzzDatabase.withLock { $0 = nil } }
        try FuzzItem.createTable()
        try FuzzOwner.createTable()
        try FuzzBadge.createTable()
        try FuzzOwnerBadge.createTable()
        var random = SeededGenerator(seed: seed)
        var owners: [Int64: OwnerShadow] = [:]
        var items: [Int64: ShadowRow] = [:]
        var itemOwner: [Int64: Int64] = [:]
        var badges: [Int64: String] = [:]
        var links = Set<OwnerBadge>()
        var deletedOwners: [Int64] = []
        var checks = 0

        func owner(of item: Int64) -> OwnerShadow? { itemOwner[item].flatMap { owners[$0] } }
        func randomItemCondition() -> RandomCondition { randomCondition(depth: 0, using: &random) }
        func matchingItems(_ condition: RandomCondition) -> [Int64] {
            items.filter { condition.evaluate($0.value) == true }.map(\.key).sorted()
        }

        let steps = 1_200
        for step in 0..<steps {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<8:    // insertAll owners
                let batch = (0..<Int.random(in: 1...4, using: &random)).map { _ -> FuzzOwner in
                    let owner = FuzzOwner()
                    owner.name = Self.names.randomElement(using: &random)!
                    owner.level = Bool.random(using: &random) ? nil : Int.random(in: 0...4, using: &random)
                    return owner
                }
                try FuzzOwner.insertAll(batch)
                for owner in batch { owners[try #require(owner.id, "\(context)")] = OwnerShadow(name: owner.name, level: owner.level) }
            case 8..<30:   // insertAll items, owned (by live or deleted owners) or not
                let ownerIDs = owners.keys.sorted()
                let batch = (0..<Int.random(in: 1...12, using: &random)).map { _ -> FuzzItem in
                    let item = FuzzItem()
                    item.name = Self.names.randomElement(using: &random)!
                    item.age = Int.random(in: -5...60, using: &random)
                    item.score = Bool.random(using: &random) ? nil : Double(Int.random(in: -20...20, using: &random)) / 4
                    item.flag = Bool.random(using: &random)
                    item.tag = Self.tags.randomElement(using: &random)!
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0..<2: item.ownerId = nil
                    case 2: item.ownerId = deletedOwners.randomElement(using: &random)
                    default: item.ownerId = ownerIDs.randomElement(using: &random)
                    }
                    return item
                }
                try FuzzItem.insertAll(batch)
                for item in batch {
                    let id = try #require(item.id, "\(context)")
                    #expect(items[id] == nil, "\(context): id \(id) handed out twice")
                    items[id] = ShadowRow(item)
                    itemOwner[id] = item.ownerId
                }
            case 30..<34:  // insertAll badges
                guard badges.count < 8 else { continue }
                let badge = FuzzBadge()
                badge.name = ["gold", "silver", "bronze", "green"].randomElement(using: &random)!
                try FuzzBadge.insertAll([badge])
                badges[badge.id!] = badge.name
            case 34..<44:  // link owners and badges (a batch with a duplicate pair writes nothing)
                guard !owners.isEmpty, !badges.isEmpty else { continue }
                var pairs: [OwnerBadge] = []
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let pair = OwnerBadge(owner: owners.keys.sorted().randomElement(using: &random)!,
                                          badge: badges.keys.sorted().randomElement(using: &random)!)
                    if !pairs.contains(pair) { pairs.append(pair) }
                }
                let rows = pairs.map { pair -> FuzzOwnerBadge in
                    let row = FuzzOwnerBadge()
                    row.ownerId = pair.owner
                    row.badgeId = pair.badge
                    return row
                }
                if pairs.contains(where: links.contains) {
                    #expect(throws: DatabaseError.self, "\(context): duplicate link") { try FuzzOwnerBadge.insertAll(rows) }
                    #expect(rows.allSatisfy { $0.hasChanges }, "\(context)")
                } else {
                    try FuzzOwnerBadge.insertAll(rows)
                    links.formUnion(pairs)
                }
            case 44..<47:  // unlink
                guard let pair = links.sorted(by: { ($0.owner, $0.badge) < ($1.owner, $1.badge) }).randomElement(using: &random) else { continue }
                #expect(try FuzzOwnerBadge.where(["ownerId": pair.owner, "badgeId": pair.badge]).delete() == 1, "\(context)")
                links.remove(pair)
            case 47..<55:  // updateAll of items matching a condition
                let condition = randomItemCondition()
                let expected = matchingItems(condition)
                if Bool.random(using: &random) {
                    let age = Int.random(in: -5...60, using: &random)
                    #expect(try FuzzItem.where(condition.predicate).updateAll(["age": age]) == expected.count, "\(context): \(condition.text)")
                    for id in expected { items[id]!.age = age }
                } else {
                    let tag = Self.tags.randomElement(using: &random)!
                    #expect(try FuzzItem.where(condition.predicate).updateAll(["tag": tag]) == expected.count, "\(context): \(condition.text)")
                    for id in expected { items[id]!.tag = tag }
                }
            case 55..<59:  // updateAll through a belongs-to
                let ownerCondition = randomOwnerCondition(using: &random)
                let flag = Bool.random(using: &random)
                let expected = items.keys.filter { owner(of: $0).flatMap(ownerCondition.evaluate) == true }
                #expect(try FuzzItem.all.joining(\.owner, where: ownerCondition.predicate).updateAll(["flag": flag]) == expected.count,
                        "\(context): owner \(ownerCondition.text)")
                for id in expected { items[id]!.flag = flag }
            case 59..<62:  // delete through a belongs-to
                let condition = randomItemCondition()
                let ownerCondition = randomOwnerCondition(using: &random)
                let expected = matchingItems(condition).filter { owner(of: $0).flatMap(ownerCondition.evaluate) == true }
                #expect(try FuzzItem.where(condition.predicate).joining(\.owner, where: ownerCondition.predicate).delete() == expected.count,
                        "\(context): \(condition.text) / owner \(ownerCondition.text)")
                for id in expected { items[id] = nil; itemOwner[id] = nil }
            case 62..<64:  // delete an owner: its items and links dangle
                guard let id = owners.keys.sorted().randomElement(using: &random) else { continue }
                #expect(try FuzzOwner.find(id: id)?.delete() == true, "\(context)")
                owners[id] = nil
                deletedOwners.append(id)
            case 64..<67:  // updateAll of owners through a has-many
                let condition = randomItemCondition()
                let level: Int? = Bool.random(using: &random) ? nil : Int.random(in: 0...4, using: &random)
                let withMatches = Set(matchingItems(condition).compactMap { itemOwner[$0] })
                let expected = owners.keys.filter(withMatches.contains)
                #expect(try FuzzOwner.all.joining(\.items, where: condition.predicate).updateAll(["level": level]) == expected.count,
                        "\(context): items \(condition.text)")
                for id in expected { owners[id]!.level = level }
            default:       // a composed query
                try checkQuery(Int.random(in: 0..<5, using: &random), context: context, random: &random,
                               owners: owners, items: items, itemOwner: itemOwner, badges: badges, links: links)
                checks += 1
            }
        }

        // Finally every table equals its shadow.
        let finalItems = try FuzzItem.findAll()
        #expect(Dictionary(uniqueKeysWithValues: finalItems.map { ($0.id!, ShadowRow($0)) }) == items, "seed \(seed): items")
        #expect(Dictionary(uniqueKeysWithValues: finalItems.compactMap { item in item.ownerId.map { (item.id!, $0) } }) == itemOwner)
        #expect(Dictionary(uniqueKeysWithValues: try FuzzOwner.findAll().map { ($0.id!, OwnerShadow(name: $0.name, level: $0.level)) }) == owners)
        #expect(Set(try FuzzOwnerBadge.all.order(by: \.$ownerId).order(by: \.$badgeId).all().map { OwnerBadge(owner: $0.ownerId, badge: $0.badgeId) }) == links)
        print("RELIABILITY randomized relations seed \(seed): \(steps) operations, \(checks) composed queries checked, \(items.count) items, \(owners.count) owners, \(links.count) links")
    }

    // swiftlint:disable:next function_parameter_count
    private func checkQuery(_ kind: Int, context: String, random: inout SeededGenerator,
                            owners: [Int64: OwnerShadow], items: [Int64: ShadowRow], itemOwner: [Int64: Int64],
                            badges: [Int64: String], links: Set<OwnerBadge>) throws {
        let condition = randomCondition(depth: 0, using: &random)
        let matching = items.filter { condition.evaluate($0.value) == true }
        let rows = matching.map { (id: $0.key, row: $0.value) }
        switch kind {
        case 0:    // owners with a matching item, each once; ordered, limited
            let descending = Bool.random(using: &random)
            let limit: Int? = Bool.random(using: &random) ? Int.random(in: 0...6, using: &random) : nil
            var query = FuzzOwner.all.joining(\.items, where: condition.predicate)
                .order(by: \.$name, descending ? .descending : .ascending).order(by: \.$id)
            if let limit { query = query.limit(limit) }
            let withMatches = Set(matching.keys.compactMap { itemOwner[$0] })
            var expected = owners.filter { withMatches.contains($0.key) }
                .sorted { $0.value.name != $1.value.name ? (descending ? $0.value.name > $1.value.name : $0.value.name < $1.value.name) : $0.key < $1.key }
                .map(\.key)
            if let limit { expected = Array(expected.prefix(limit)) }
            #expect(try query.all().map { $0.id! } == expected, "\(context): owners with items \(condition.text)")
            #expect(try query.count() == expected.count, "\(context): count")
            #expect(try query.exists() == !expected.isEmpty, "\(context): exists")
        case 1:    // items of matching owners, filtered too; grouped by owner
            let ownerCondition = randomOwnerCondition(using: &random)
            let expected = rows.filter { item in itemOwner[item.id].flatMap { owners[$0] }.flatMap(ownerCondition.evaluate) == true }
            let query = FuzzItem.where(condition.predicate).joining(\.owner, where: ownerCondition.predicate)
            #expect(try query.pluck(\.$id).compactMap { $0 }.sorted() == expected.map(\.id).sorted(),
                    "\(context): \(condition.text) with owner \(ownerCondition.text)")
            #expect(try query.group(by: \.$ownerId).count() == SwiftGroups.count(expected) { itemOwner[$0.id] },
                    "\(context): per owner")
        case 2:    // many-to-many, both ways
            guard let badge = badges.keys.sorted().randomElement(using: &random) else { return }
            let ownerCondition = randomOwnerCondition(using: &random)
            let byName = badges[badge]!
            let expectedOwners = owners.keys.filter { owner in
                links.contains { $0.owner == owner && badges[$0.badge] == byName }
            }.sorted()
            #expect(sortedIDs(try FuzzOwner.all.joining(\.badges, where: \.$name == byName).all()) == expectedOwners,
                    "\(context): owners with a \(byName) badge")
            let expectedBadges = badges.keys.filter { badge in
                links.contains { $0.badge == badge && owners[$0.owner].flatMap(ownerCondition.evaluate) == true }
            }.sorted()
            #expect(sortedIDs(try FuzzBadge.all.joining(\.owners, where: ownerCondition.predicate).all()) == expectedBadges,
                    "\(context): badges of owners \(ownerCondition.text)")
        case 3:    // group(by:) aggregates of the matching items
            let grouped = FuzzItem.where(condition.predicate).group(by: \.$tag)
            let values = rows.map(\.row)
            #expect(try grouped.count() == SwiftGroups.count(values, by: \.tag), "\(context): count by tag, \(condition.text)")
            #expect(try grouped.sum(\.$age) == SwiftGroups.sum(values, by: \.tag) { $0.age }, "\(context): sum age")
            #expect(try grouped.sum(\.$score) == SwiftGroups.sum(values, by: \.tag, \.score), "\(context): sum score")
            #expect(try grouped.min(\.$score) == SwiftGroups.min(values, by: \.tag, \.score), "\(context): min score")
            #expect(try grouped.max(\.$name) == SwiftGroups.max(values, by: \.tag) { $0.name }, "\(context): max name")
            #expect(closeEnough(try grouped.average(\.$score), SwiftGroups.average(values, by: \.tag, \.score)), "\(context): average")
            #expect(try FuzzItem.where(condition.predicate).group(by: \.$flag).max(\.$age) == SwiftGroups.max(values, by: \.flag) { $0.age })
        default:   // distinct plucks and counts
            let values = rows.map(\.row)
            let tags = try FuzzItem.where(condition.predicate).distinct().pluck(\.$tag)
            #expect(tags.count == Set(tags).count && Set(tags) == Set(values.map(\.tag)), "\(context): distinct tags, \(condition.text)")
            #expect(try FuzzItem.where(condition.predicate).distinct().count(\.$name) == Set(values.map(\.name)).count)
            #expect(try FuzzItem.where(condition.predicate).distinct().count(\.$score) == Set(values.compactMap(\.score)).count)
            let limit = Int.random(in: 0...5, using: &random)
            #expect(try FuzzItem.where(condition.predicate).distinct().order(by: \.$age).limit(limit).pluck(\.$age)
                == Array(Set(values.map(\.age)).sorted().prefix(limit)), "\(context): distinct ages, limit \(limit)")
        }
    }

    private func randomOwnerCondition(using random: inout SeededGenerator) -> OwnerCondition {
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            let level = Int.random(in: 0...4, using: &random)
            return OwnerCondition(predicate: \FuzzOwner.$level == level, evaluate: { $0.level.map { $0 == level } }, text: "level == \(level)")
        case 1:
            return OwnerCondition(predicate: \FuzzOwner.$level == nil, evaluate: { $0.level == nil }, text: "level IS NULL")
        case 2:
            let level = Int.random(in: 0...4, using: &random)
            return OwnerCondition(predicate: \FuzzOwner.$level > level, evaluate: { $0.level.map { $0 > level } }, text: "level > \(level)")
        case 3:
            let name = Self.names.randomElement(using: &random)!
            return OwnerCondition(predicate: \FuzzOwner.$name == name, evaluate: { $0.name == name }, text: "name == \(name)")
        case 4:
            let a = randomOwnerCondition(using: &random), b = randomOwnerCondition(using: &random)
            return OwnerCondition(predicate: a.predicate || b.predicate, evaluate: { row -> Bool? in
                switch (a.evaluate(row), b.evaluate(row)) {
                case (true?, _), (_, true?): return true
                case (false?, false?): return false
                default: return nil
                }
            }, text: "(\(a.text) OR \(b.text))")
        default:
            let a = randomOwnerCondition(using: &random)
            return OwnerCondition(predicate: !a.predicate, evaluate: { row in a.evaluate(row).map { !$0 } }, text: "NOT \(a.text)")
        }
    }
}
