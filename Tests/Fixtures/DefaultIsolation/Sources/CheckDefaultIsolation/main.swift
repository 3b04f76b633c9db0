// Exits 0 when the models of a main-actor-by-default module behave, on a file database with
// the default options (WAL, readers): hooks overridden there run, in order; validation
// refuses; class settings apply; the models work from the main actor (synchronously and with
// `await`) and from other tasks. Prints what happened.
import ActiveObjects
import Foundation
import Models

var failures: [String] = []
func check(_ condition: Bool, _ message: String) {
    if !condition { failures.append(message) }
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("default-isolation-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
/// Counts the statements the database runs (its `trace` hook runs on the library's threads).
nonisolated final class StatementCounter: @unchecked Sendable {
    // Safety: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
let statements = StatementCounter()
var options = Database.Options()
options.trace = { _, _ in statements.add() }
let database = try Database(path: folder.appendingPathComponent("notes.sqlite").path, options: options)
check(database.usesReaderConnections, "the file database should use reader connections")
ActiveObject.defaultDatabase = database
try Folder.createTable()
try Note.createTable()

let work = Folder()
work.name = "work"
try work.save()
let note = try saveNote("groceries", tags: ["home"], in: work)
check(note.events == ["validate", "willSave", "didSave"], "hooks on save: \(note.events)")
check(note.createdAt == Date(timeIntervalSince1970: 1_000_000), "willSave's change was not saved")
let columns: [String] = try database.rows("PRAGMA table_info(notes)").map { try $0["name"] }
check(columns == ["id", "title", "created_at", "folder_id", "tags"], "class settings not applied: \(columns)")

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
check(loaded?.events == ["didLoad"], "didLoad did not run: \(loaded?.events ?? [])")

// From the main actor, with `await`: a view model loads (eager loading kept), renames, saves.
let screen = NotesScreen()
try await screen.load()
check(screen.notes.map(\.title) == ["groceries"], "the screen did not load: \(screen.notes)")
if let first = screen.notes.first {
    // No SQL runs: the folder comes from the eager load.
    let before = statements.value
    let folderName = try await screen.folderName(of: first)
    check(folderName == "work", "the eager-loaded folder was lost: \(String(describing: folderName))")
    check(statements.value == before, "the awaited get() of an eager-loaded folder ran \(statements.value - before) statement(s)")
}
if let first = screen.notes.first {
    try await screen.rename(first, to: "shopping")
    check(first.events.suffix(3) == ["validate", "willSave", "didSave"], "hooks on an awaited save: \(first.events)")
}

// From other tasks: reads and writes off the main actor, concurrently.
let written = try await withThrowingTaskGroup(of: Int64.self) { group in
    for index in 0..<8 {
        group.addTask {
            let other = Note()
            other.title = "task \(index)"
            try await other.save()
            return other.id ?? -1
        }
    }
    var ids: [Int64] = []
    for try await id in group { ids.append(id) }
    return ids
}
check(Set(written).count == 8 && !written.contains(-1), "saves from tasks: \(written)")
let count = try await Task.detached { try Note.countAll() }.value
check(count == 9, "count off the main actor: \(count)")
let titles = try await Task.detached { try Note.all.order(by: \.$title).pluck(\.$title) }.value
check(titles.first == "shopping", "the awaited rename was not saved: \(titles)")

if let loaded {
    check(try loaded.delete(), "delete() found no row")
    check(loaded.events.suffix(2) == ["willDelete", "didDelete"], "hooks on delete: \(loaded.events)")
}

print("saved and loaded: \(note); \(count) notes written from the main actor and from tasks")
try database.close()
if failures.isEmpty {
    print("check-default-isolation: ok")
} else {
    for failure in failures { print("check-default-isolation: FAILED: \(failure)") }
    exit(1)
}
