import ActiveObjects
import Foundation

// The models: ordinary, non-Sendable classes.
final class Person: ActiveObject {
    @Column var name: String = ""
    @Column var age: Int = 0
    @Column var active: Bool = true
}

// API.md §10: a @MainActor screen fetches in the background and keeps the objects.
@MainActor final class PeopleScreen {
    var people: [Person] = []

    func load() async throws {
        people = try await Person.where(\.$active == true).order(by: \.$name).all()
    }

    func rename(_ person: Person, to name: String) async throws {
        person.name = name
        try await person.save()
    }

    func add(_ name: String, age: Int) async throws {
        let person = Person()
        person.name = name
        person.age = age
        try await person.save()
        people.append(person)
    }
}

/// Runs off the main actor; its result is `sending`, so the caller may keep the objects.
nonisolated func adults() async throws -> sending [Person] {
    try await Person.where(\.$age >= 18).all()
}

@MainActor
func runExamples() async throws {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("swift6-examples-\(ProcessInfo.processInfo.processIdentifier).sqlite").path
    defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

    var options = Database.Options()
    options.maximumReaderCount = 4
    let db = try Database(path: path, options: options)
    ActiveObject.defaultDatabase = db
    try await db.execute("CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', age INTEGER NOT NULL DEFAULT 0, active INTEGER NOT NULL DEFAULT 1)")

    let screen = PeopleScreen()
    try await screen.add("Joe", age: 30)
    try await screen.add("Ann", age: 25)
    try await screen.load()
    try await screen.rename(screen.people[0], to: "Anna")

    let total = try await Person.countAll()
    let everyone = try await db.read { try Person.findAll() }
    try await db.transaction { try Person.delete(where: ["active": false]) }
    let (count, people) = try await db.read { (try Person.countAll(), try Person.findAll()) }
    let names = try await Person.all.order(by: \.$name).pluck(\.$name)
    let newest = try await Person.all.order(by: \.$id, .descending).first()

    // Objects fetched by nonisolated code are handed over to the main actor.
    screen.people = try await adults()

    print("total \(total), everyone \(everyone.count), snapshot \(count)/\(people.count), names \(names), newest \(newest?.name ?? "-")")
    try db.close()
}

try await runExamples()
