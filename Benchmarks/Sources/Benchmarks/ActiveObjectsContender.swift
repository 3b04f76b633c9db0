import ActiveObjects

// ActiveObjects, used the way its README shows: a model subclass with @Column properties,
// `save()` in a transaction, `findAll()`, `find(id:)`, `Item.all.each`, `Item.all.cursor()`.

final class Item: ActiveObject {
    @Column var intA: Int = 0
    @Column var intB: Int = 0
    @Column var intC: Int = 0
    @Column var realA: Double = 0
    @Column var realB: Double = 0
    @Column var textA: String = ""
    @Column var textB: String = ""
    @Column var textC: String = ""
    @Column var note: String? = nil
    @Column var active: Bool = false
}

final class ActiveObjectsContender: Contender {
    let name = "ActiveObjects"
    private let database: Database

    init(path: String) throws {
        var options = Database.Options()
        options.journalMode = .wal
        database = try Database(path: path, options: options)
        // The benchmark has one ActiveObjects database: the models' default.
        ActiveObject.defaultDatabase = database
    }

    func close() throws {
        ActiveObject.defaultDatabase = nil
        try database.close()
    }

    func execute(_ sql: String) throws { try database.execute(sql) }

    @inline(__always)
    private static func checksum(_ item: Item) -> Int {
        rowChecksum(id: item.id!, intA: item.intA, realA: item.realA, textA: item.textA,
                    note: item.note, active: item.active)
    }

    func insert(_ seeds: [ItemSeed]) throws -> Int {
        var checksum = 0
        try database.transaction {
            for seed in seeds {
                let item = Item()
                item.intA = seed.intA
                item.intB = seed.intB
                item.intC = seed.intC
                item.realA = seed.realA
                item.realB = seed.realB
                item.textA = seed.textA
                item.textB = seed.textB
                item.textC = seed.textC
                item.note = seed.note
                item.active = seed.active
                try item.save()
                checksum &+= Int(item.id!)
            }
        }
        return checksum
    }

    func insertAll(_ seeds: [ItemSeed]) throws -> Int {
        let items = seeds.map { seed in
            let item = Item()
            item.intA = seed.intA
            item.intB = seed.intB
            item.intC = seed.intC
            item.realA = seed.realA
            item.realB = seed.realB
            item.textA = seed.textA
            item.textB = seed.textB
            item.textC = seed.textC
            item.note = seed.note
            item.active = seed.active
            return item
        }
        try Item.insertAll(items)
        return items.reduce(0) { $0 &+ Int($1.id!) }
    }

    func fetchAll() throws -> Int {
        let items = try Item.findAll()
        return items.reduce(0) { $0 &+ Self.checksum($1) }
    }

    func find(ids: [Int64]) throws -> Int {
        var checksum = 0
        for id in ids {
            if let item = try Item.find(id: id) { checksum &+= Self.checksum(item) }
        }
        return checksum
    }

    func each() throws -> Int {
        var checksum = 0
        try Item.all.each { checksum &+= Self.checksum($0) }
        return checksum
    }

    func cursor() throws -> Int {
        let cursor = try Item.all.cursor()
        var checksum = 0
        while let item = try cursor.next() { checksum &+= Self.checksum(item) }
        return checksum
    }
}
