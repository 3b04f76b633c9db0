// Exits 0 when the models of a main-actor-by-default module behave: hooks overridden there
// run, in order, validation refuses, class settings apply. Prints what happened.
import ActiveObjects
import Foundation
import Models

var failures: [String] = []
func check(_ condition: Bool, _ message: String) {
    if !condition { failures.append(message) }
}

let database = try Database.inMemory()
ActiveObject.defaultDatabase = database
try Note.createTable()
try Pinned.createTable()

let note = try saveNote("groceries", tags: ["home"])
check(note.events == ["validate", "willSave", "didSave"], "hooks on save: \(note.events)")
check(note.createdAt == Date(timeIntervalSince1970: 1_000_000), "willSave's change was not saved")
let columns: [String] = try database.rows("PRAGMA table_info(notes)").map { try $0["name"] }
check(columns == ["id", "title", "created_at", "tags"], "class settings not applied: \(columns)")

let empty = Note()
do {
    try empty.save()
    failures.append("validate() did not refuse an empty title")
} catch ActiveObjectError.validationFailed(let error) {
    print("validation refused: \(error)")
}
check(empty.id == nil, "the refused note was written")

let loaded = try Note.find(id: note.id ?? -1)
check(loaded?.title == "groceries" && loaded?.tags == ["home"], "the note did not round-trip: \(String(describing: loaded))")
if let loaded {
    check(try loaded.delete(), "delete() found no row")
    check(loaded.events == ["willDelete", "didDelete"], "hooks on delete: \(loaded.events)")
}

// A count from a task off the main actor (the result is Sendable).
let count = try await Task.detached { try Note.countAll() }.value
check(count == 0, "count off the main actor: \(count)")

let pinned = Pinned()
pinned.text = "top"
try pinned.save()
check(try Pinned.findAll().map(\.text) == ["top"], "the @MainActor model did not round-trip")

print("saved and loaded: \(note), \(pinned)")
if failures.isEmpty {
    print("check-default-isolation: ok")
} else {
    for failure in failures { print("check-default-isolation: FAILED: \(failure)") }
    exit(1)
}
