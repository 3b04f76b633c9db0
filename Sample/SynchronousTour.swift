// The synchronous part of the tour: one in-memory database, every feature in turn.
import ActiveObjects
import Foundation

func section(_ title: String) { print("\n== \(title) ==") }

func runSynchronousTour() throws {
    // MARK: Opening a database

    section("Opening a database")
    let log = try SQLLog()
    var options = Database.Options()
    options.trace = { sql, _ in log.append(sql) }
    let db = try Database.inMemory(options: options)
    ActiveObject.defaultDatabase = db
    try db.execute("CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    try db.execute("INSERT INTO note (text) VALUES (?)", ["raw SQL is always there"])
    let notes = try db.rows("SELECT id, text FROM note")
    let firstNote: String = try notes[0]["text"]
    let noteCount: Int? = try db.scalar("SELECT count(*) FROM note")
    print("note:", firstNote, "| count:", noteCount ?? 0)

    // MARK: Schema

    section("Creating tables")
    var migrator = Migrator()
    migrator.register("001-create-groups") { db in try Group.createTable(in: db) }
    migrator.register("002-create-people") { db in try Person.createTable(in: db) }
    try migrator.migrate(db)
    print("applied migrations:", try migrator.appliedMigrations(db))
    _ = try log.take()

    // MARK: Saving

    section("Saving")
    let crew = Group(); crew.name = "Crew"
    try crew.save()
    let joe = Person()
    joe.name = "Joe"; joe.age = 30; joe.income = 52_000; joe.tags = ["admin"]
    try joe.save()
    print("inserted:", joe)
    joe.age = 31
    print("changed columns:", joe.changedColumns)
    try joe.save()
    try joe.save()   // unchanged: no SQL at all
    print("SQL:", try log.take().filter { !$0.hasPrefix("SELECT") })

    for (name, age, rating) in [("Ann", 25, 4.5), ("Bob", 41, 3.0), ("Cid", 35, 4.0), ("Dee", 19, 5.0), ("Eve", 52, 2.5)] {
        let person = Person()
        person.name = name; person.age = age; person.rating = rating
        person.birthdate = Calendar(identifier: .gregorian).date(byAdding: .year, value: -age, to: Date(timeIntervalSince1970: 1_700_000_000))
        try crew.people.add(person)
    }

    let nameless = Person()
    do { try nameless.save() } catch { print("refused:", error, "| id still:", nameless.id as Any) }

    // MARK: Finding

    section("Finding and counting")
    print("find(id: 1):", try Person.find(id: 1)?.name ?? "-")
    print("age 30 or 31:", try Person.find(where: ["age": [30, 31]]).map(\.name))
    print("no rating:", try Person.find(where: ["rating": nil]).map(\.name))
    print("first named Ann:", try Person.findFirst(where: ["name": "Ann"])?.age ?? -1)
    print("count:", try Person.countAll(), "| active:", try Person.count(where: ["active": true]))
    do { _ = try Person.find(where: ["nmae": "Joe"]) } catch { print("typo:", error) }

    // MARK: Queries

    section("Queries")
    let adults = Person.where(\.$age >= 21 && \.$rating != nil).order(by: \.$age, .descending)
    print("adults with a rating, oldest first:", try adults.all().map { "\($0.name) \($0.age)" })
    print("fragment:", try Person.where("age BETWEEN ? AND ?", 20, 40).order(by: "name").pluck(\.$name))
    print("LIKE:", try Person.where(\.$name, .like("%e")).pluck(\.$name))
    print("IN:", try Person.where(\.$age, .in([19, 25])).count())
    print("page 2 of 2 per page:", try Person.all.order(by: \.$name).page(2, size: 2).map(\.name))
    print("exists age > 50:", try Person.where(\.$age > 50).exists())
    print("sum/min/max/avg age:", try Person.all.sum(\.$age), try Person.all.min(\.$age) ?? 0,
          try Person.all.max(\.$age) ?? 0, try Person.all.average(\.$age) ?? 0)
    var streamed: [String] = []
    try Person.where(\.$age < 40).order(by: \.$age).each { streamed.append($0.name) }
    print("each (one row in memory at a time):", streamed)
    let cursor = try Person.all.order(by: \.$age, .descending).limit(2).cursor()
    while let person = try cursor.next() { print("cursor:", person.name) }

    // MARK: Relations

    section("Relations")
    print("crew has", try crew.people.count(), "people; over 40:", try crew.people.where(\.$age > 40).all().map(\.name))
    _ = try log.take()
    let members = try Person.where(\.$groupId != nil).including(\.group).all()
    print("eager loading:", members.map { "\($0.name)@\((try? $0.group.get())?.name ?? "-")" })
    print("queries for \(members.count) people and their groups:", try log.take().count)

    // MARK: Updating and deleting

    section("Updating and deleting")
    let bob = try Person.findFirst(where: ["name": "Bob"])!
    bob.active = false
    try bob.save()
    print("inactive:", try Person.where(["active": false]).pluck(\.$name))
    print("deleted inactive:", try Person.delete(where: ["active": false]))
    print("Joe deleted:", try joe.delete(), "| left:", try Person.countAll())

    // MARK: Transactions

    section("Transactions")
    do {
        try db.transaction {
            let temp = Person(); temp.name = "Temp"
            try temp.save()
            throw ValidationError("demo", "rollback")
        }
    } catch {
        print("rolled back:", error, "| Temp exists:", try Person.where(["name": "Temp"]).exists())
    }

    // MARK: Keys of any type, many-to-many

    section("Keys of any type")
    try Customer.createTable()
    try Order.createTable()
    for (code, country) in [("ALFKI", "Germany"), ("BONAP", "France"), ("VINET", "France")] {
        let customer = Customer()
        customer.code = code
        customer.country = country
        try customer.save()
    }
    let vinet = try Customer.find(key: "VINET")!
    for (freight, city) in [("32.38", "Reims"), ("11.61", "Reims"), ("65.83", nil)] as [(String, String?)] {
        let order = Order()
        order.freight = Decimal(string: freight)!
        order.shipCity = city
        try vinet.orders.add(order)
    }
    let alfkiOrder = Order()
    alfkiOrder.freight = 512.5
    alfkiOrder.shipCity = "Berlin"
    try Customer.find(key: "ALFKI")!.orders.add(alfkiOrder)
    print("VINET's orders:", try vinet.orders.count(), "| an order's customer:", try alfkiOrder.customer.get()?.code ?? "-")

    section("Many-to-many")
    try Track.createTable()
    try Playlist.createTable()
    try PlaylistTrack.createTable()
    let mix = Playlist()
    mix.name = "Mix"
    for (title, seconds) in [("Intro", 90), ("So What", 545), ("Blue in Green", 337)] {
        let track = Track()
        track.title = title
        track.seconds = seconds
        try mix.tracks.add(track)          // saves the new playlist and track, then the join row
    }
    print("Mix:", try mix.tracks.all().map(\.title), "| longer than 5 min:", try mix.tracks.where(\.$seconds > 300).count())
    _ = try log.take()
    let lists = try Playlist.all.including(\.tracks).all()
    print("playlists with their tracks in", try log.take().count, "queries:", lists.map { "\($0.name): \((try? $0.tracks.count()) ?? 0)" })

    // MARK: Across relations, grouping, batch writes

    section("Across relations, grouping, batch writes")
    print("orders of French customers:", try Order.all.joining(\.customer, where: \.$country == "France").count())
    print("customers with an order over 500:", try Customer.all.joining(\.orders, where: \.$freight > Decimal(500)).pluck(\.$code))
    print("orders per customer:", try Order.all.group(by: \.$customerCode).count().sorted { ($0.key ?? "") < ($1.key ?? "") }.map { "\($0.key ?? "-"): \($0.value)" })
    print("freight per customer (exact):", try Order.all.group(by: \.$customerCode).sum(\.$freight).sorted { ($0.key ?? "") < ($1.key ?? "") }.map { "\($0.key ?? "-"): \($0.value)" })
    print("cities we ship to:", try Order.all.distinct().order(by: \.$shipCity).pluck(\.$shipCity).map { $0 ?? "(none)" })
    print("orders to Reims re-routed:", try Order.where(\.$shipCity == "Reims").updateAll(["shipCity": "Paris"]))
    let imported = (1...1_000).map { number -> Track in
        let track = Track()
        track.title = "Imported \(number)"
        track.seconds = number % 400
        return track
    }
    _ = try log.take()
    try Track.insertAll(imported)
    print("insertAll: 1,000 tracks in", try log.take().filter { $0.hasPrefix("INSERT") }.count, "INSERTs; ids", imported.first!.id!, "…", imported.last!.id!)
}
