// notes-device: one notes device on the command line — the Notes example's database and
// models, synchronized with a SyncServer over HTTP. `.ci/check-sync` runs two of them at once.
//
//     notes-device --db PATH --url URL --token TOKEN --name NAME --edits N --seed S [--sync-every K] [--pause MS] [--exchange-delay MS]
//
// opens (or creates) the device's database, then makes N random edits through the Notes
// models — insert a note, change a title, a body, the pin, several notes in one transaction,
// delete a note, insert a note again under the UUID of one deleted before — drawn from a
// generator seeded with S, and synchronizes every K edits (default 10), printing
// `NAME edit I syncing` before and `NAME edit I pushed P pulled Q pending R notes M` after each
// synchronization. Then it synchronizes until nothing is pending, and prints
// `NAME done: …`. --pause waits MS milliseconds after each edit (a user's pace: devices run
// side by side instead of one finishing before the other starts). --exchange-delay waits MS milliseconds after each reply arrived before the
// engine gets it: the hub has stored the push, the device has not yet recorded it — the window
// in which the CI test kills a device mid-sync.
//
//     notes-device --db PATH --url URL --token TOKEN [--name NAME] --sync-only
//
// synchronizes until nothing is pending and the last synchronization pulled nothing, and prints
// `NAME sync-only: pushed P pulled Q in S syncs pending 0 notes M` (P and Q the totals).
//
//     notes-device --db PATH --dump
//
// prints every note of the database, one canonical line per note sorted by uuid (the format of
// `SyncServer dump`, see Sources/NoteRows), for diff.
//
// Exits 0 on success, 1 when a synchronization fails for good (transport errors are tried again
// a few times), 64 for bad arguments.
import ActiveObjects
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import NoteRows
import Notes

let usage = """
    usage: notes-device --db PATH --url URL --token TOKEN --name NAME --edits N --seed S [--sync-every K] [--pause MS] [--exchange-delay MS]
           notes-device --db PATH --url URL --token TOKEN [--name NAME] --sync-only
           notes-device --db PATH --dump
    """

func fail(_ message: String, status: Int32 = 64) -> Never {
    FileHandle.standardError.write(Data("notes-device: \(message)\n\(status == 64 ? usage + "\n" : "")".utf8))
    exit(status)
}

func say(_ line: String) {
    // Unbuffered: a script following the output sees each line as soon as it is printed.
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
let flags: Set<String> = ["--sync-only", "--dump"]
let valued: Set<String> = ["--db", "--url", "--token", "--name", "--edits", "--seed", "--sync-every", "--pause", "--exchange-delay"]
var options: [String: String] = [:]
var modes: Set<String> = []
var index = 0
while index < arguments.count {
    let argument = arguments[index]
    if flags.contains(argument) {
        modes.insert(argument)
    } else if valued.contains(argument) {
        guard index + 1 < arguments.count, !arguments[index + 1].isEmpty else { fail("\(argument) needs a value") }
        options[argument] = arguments[index + 1]
        index += 1
    } else {
        fail("unknown argument \(argument)")
    }
    index += 1
}
guard modes.count <= 1 else { fail("--sync-only and --dump exclude each other") }

@MainActor
func required(_ name: String) -> String {
    guard let value = options[name] else { fail("\(name) is required") }
    return value
}

@MainActor
func number(_ name: String, default value: Int? = nil, minimum: Int = 0) -> Int {
    guard let text = options[name] else {
        guard let value else { fail("\(name) is required") }
        return value
    }
    guard let parsed = Int(text), parsed >= minimum else { fail("\(name) must be an integer ≥ \(minimum), not \(text)") }
    return parsed
}

let databasePath = required("--db")
let name = options["--name"] ?? "device"

// MARK: --dump

if modes.contains("--dump") {
    guard FileManager.default.fileExists(atPath: databasePath) else { fail("no database at \(databasePath)", status: 1) }
    let database = try NotesDatabase.open(path: databasePath)
    let rows = try database.rows("SELECT * FROM \(Note.tableName)").map { row in
        Dictionary(uniqueKeysWithValues: zip(row.columnNames, row.values))
    }
    for line in NoteRows.lines(rows, keyColumn: Note.primaryKey) { say(line) }
    try database.close()
    exit(0)
}

// MARK: Synchronizing

/// Hands each exchange to `base`, and waits `delay` after the reply arrived before the engine
/// gets it (a window in which the hub has stored the push and the device has not recorded it).
struct DelayedTransport: SyncTransport {
    let base: HTTPSyncTransport
    let delay: Duration

    func exchange(_ request: Data) async throws -> Data {
        let reply = try await base.exchange(request)
        try await Task.sleep(for: delay)
        return reply
    }
}

guard let url = URL(string: required("--url")), url.scheme != nil else { fail("--url must be a URL like http://127.0.0.1:8080/sync") }
let http = HTTPSyncTransport(url: url, token: required("--token"), timeout: 30)
let exchangeDelay = number("--exchange-delay", default: 0)
let transport: any SyncTransport = exchangeDelay > 0 ? DelayedTransport(base: http, delay: .milliseconds(exchangeDelay)) : http

let database: Database
let engine: SyncEngine
do {
    database = try NotesDatabase.open(path: databasePath)
    engine = try NotesDatabase.syncEngine(database: database, transport: transport)
} catch {
    fail("cannot open \(databasePath): \(error)", status: 1)
}

/// One `synchronize()`, tried again (up to 5 times, after 0.2, 0.4… s) when the server could not
/// be reached; any other failure ends the program.
@MainActor
func synchronize() async -> SyncReport {
    var attempt = 1
    while true {
        do {
            return try await engine.synchronize()
        } catch let error as URLError where attempt < 5 {
            say("\(name) sync failed (\(error.code.rawValue): \(error.localizedDescription)); trying again")
            try? await Task.sleep(for: .milliseconds(200 * attempt))
            attempt += 1
        } catch {
            fail("\(name): synchronization failed: \(error)", status: 1)
        }
    }
}

@MainActor
func pending() -> Int {
    do { return try engine.pendingChangeCount() } catch { fail("\(name): pendingChangeCount failed: \(error)", status: 1) }
}

@MainActor
func noteCount() -> Int {
    do { return try Note.countAll() } catch { fail("\(name): counting the notes failed: \(error)", status: 1) }
}

/// Synchronizes until nothing is pending and, with `untilNothingPulled`, the last
/// synchronization pulled nothing. Returns the totals and the number of synchronizations.
@MainActor
func synchronizeUntilSettled(untilNothingPulled: Bool) async -> (pushed: Int, pulled: Int, syncs: Int) {
    var totals = (pushed: 0, pulled: 0, syncs: 0)
    while true {
        let report = await synchronize()
        totals.pushed += report.pushed
        totals.pulled += report.pulled
        totals.syncs += 1
        let waiting = pending()
        if waiting == 0 && (!untilNothingPulled || report.pulled == 0) { return totals }
        guard totals.syncs < 20 else {
            fail("\(name): still \(waiting) change(s) pending, or pulling, after 20 synchronizations (last: \(report))", status: 1)
        }
    }
}

if modes.contains("--sync-only") {
    let started = ContinuousClock.now
    let totals = await synchronizeUntilSettled(untilNothingPulled: true)
    say("\(name) sync-only: pushed \(totals.pushed) pulled \(totals.pulled) in \(totals.syncs) syncs pending \(pending()) notes \(noteCount()) (\(ContinuousClock.now - started))")
    try database.close()
    exit(0)
}

// MARK: Random edits

/// SplitMix64: a small generator whose sequence the seed fixes.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let edits = number("--edits", minimum: 0)
let syncEvery = number("--sync-every", default: 10, minimum: 1)
let pause = Duration.milliseconds(number("--pause", default: 0))
var random = SeededGenerator(state: UInt64(bitPattern: Int64(number("--seed"))))

// Words with what a text column must carry intact: accents, an emoji, quotes, a backslash, a
// line break, a tab.
let words = ["milk", "bread", "call", "Ada", "meeting", "café", "naïve", "🙂", "\"quoted\"", "back\\slash",
             "line\nbreak", "tab\there", "O'Brien", "日本", "x", "plan", "later", "todo"]

@MainActor
func text(_ count: ClosedRange<Int>) -> String {
    (0..<Int.random(in: count, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
}

@MainActor
func title() -> String {
    "\(name) \(text(1...4))"
}

/// The notes, in a fixed order (the rowid order differs between devices; the uuid's does not).
@MainActor
func allNotes() throws -> [Note] {
    try Note.order(by: \.$uuid).all()
}

/// The UUIDs of notes this run deleted: candidates for an insert under an old key.
var deleted: [UUID] = []

@MainActor
func insert(uuid: UUID? = nil) throws -> String {
    let note = Note()
    if let uuid { note.uuid = uuid }
    note.title = title()
    note.body = text(0...12)
    note.pinned = Int.random(in: 0..<5, using: &random) == 0
    try note.save()
    return uuid == nil ? "insert" : "insert again"
}

/// One random edit; returns what it did.
@MainActor
func edit() throws -> String {
    let notes = try allNotes()
    guard !notes.isEmpty else { return try insert() }
    let note = notes.randomElement(using: &random)!
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<25:
        return try insert()
    case 25..<45:
        note.title = title()
        try note.save()
        return "title"
    case 45..<60:
        note.body = text(0...12)
        try note.save()
        return "body"
    case 60..<67:
        note.pinned.toggle()
        try note.save()
        return "pin"
    case 67..<72:
        // Several notes in one transaction: one commit, recorded together.
        let chosen = (0..<3).map { _ in notes.randomElement(using: &random)! }
        try database.transaction {
            for note in chosen {
                note.title = title()
                note.body = text(0...6)
                try note.save()
            }
        }
        return "transaction"
    case 72..<88:
        deleted.append(note.uuid)
        try note.delete()
        return "delete"
    default:
        // A note inserted again under the key of one deleted before (unless a pull brought it back).
        guard let uuid = deleted.randomElement(using: &random) else { return try insert() }
        if let existing = try Note.find(key: uuid) {
            existing.title = title()
            try existing.save()
            return "title"
        }
        return try insert(uuid: uuid)
    }
}

let started = ContinuousClock.now
var counts: [String: Int] = [:]
var totals = (pushed: 0, pulled: 0)
for step in 1...max(edits, 1) where edits > 0 {
    do {
        counts[try edit(), default: 0] += 1
    } catch {
        fail("\(name): edit \(step) failed: \(error)", status: 1)
    }
    if pause > .zero { try await Task.sleep(for: pause) }
    if step % syncEvery == 0 {
        say("\(name) edit \(step) syncing")
        let report = await synchronize()
        totals.pushed += report.pushed
        totals.pulled += report.pulled
        say("\(name) edit \(step) pushed \(report.pushed) pulled \(report.pulled) pending \(pending()) notes \(noteCount())")
    }
}
let settled = await synchronizeUntilSettled(untilNothingPulled: false)
totals.pushed += settled.pushed
totals.pulled += settled.pulled
let done = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
say("\(name) done: \(edits) edits (\(done)); pushed \(totals.pushed) pulled \(totals.pulled) pending \(pending()) notes \(noteCount()) (\(ContinuousClock.now - started))")
try database.close()
