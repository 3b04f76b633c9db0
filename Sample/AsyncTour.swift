// The async part of the tour: a file database with reader connections, async/await from a
// @MainActor screen, a consistent snapshot, and a live query that follows commits made by
// another connection.
import ActiveObjects
import Foundation

/// A screen as an app writes it: main-actor state, filled by async calls.
@MainActor final class PeopleScreen {
    var people: [Person] = []

    func load() async throws {
        people = try await Person.where(\.$active == true).order(by: \.$name).all()
    }

    func rename(_ person: Person, to name: String) async throws {
        person.name = name
        try await person.save()        // reads the object here, writes on the writer thread
    }
}

@MainActor
func runAsyncTour() async throws {
    section("Readers beside the writer, async/await")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("activeobjects-sample-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("tour.sqlite").path
    let db = try Database(path: path)          // WAL: one writer, up to 4 readers
    ActiveObject.defaultDatabase = db
    try await db.execute("CREATE TABLE \"group\" (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '')")
    try Person.createTable()
    print("reader connections:", db.usesReaderConnections)

    let screen = PeopleScreen()
    for name in ["Ann", "Bob", "Cid"] {
        let person = Person()
        person.name = name
        person.age = 30
        try await person.save()
    }
    try await screen.load()
    try await screen.rename(screen.people[0], to: "Anna")
    print("screen:", screen.people.map(\.name), "| count:", try await Person.countAll())
    let (count, everyone) = try await db.read { (try Person.countAll(), try Person.findAll()) }
    print("one snapshot:", count, "=", everyone.count)

    section("Live queries")
    var received: [[String]] = []
    let other = try Database(path: path)       // another connection (it could be another process)
    for try await names in Person.all.order(by: \.$name).values().map({ $0.map(\.name) }) {
        received.append(names)
        print("live:", names)
        switch received.count {
        case 1:
            let dee = Person()
            dee.name = "Dee"
            try await dee.save()               // a commit of this database
        case 2:
            try await other.execute("INSERT INTO person (name) VALUES ('Eve')")   // another connection's
        default:
            break
        }
        if received.count == 3 { break }      // leaving the loop ends the observation
    }
    try other.close()
    try db.close()
}
