import ActiveObjects
import Foundation
import Observation

// What Observation costs: ActiveObjects' models are `Observable` with no macro (a `@Column`
// getter asks, in a few instructions, whether a tracking scope is open; a setter notifies only
// objects that were read inside one). Measured against a hand-written `@Observable` class with
// the same properties, on the same values.
//
// - observe-edit: for each of N objects, `withObservationTracking` reading `textA` and `intA`,
//   then an equal value assigned to `intA` (while the observer is still installed: it must not
//   fire) and a different value to `textA` (it fires, once). The checksum is the number of
//   `onChange` calls: N.
// - observe-plain: the same two assignments with nobody observing, the two properties read
//   back into a checksum: "observing costs nothing when nobody observes".
//
// ActiveObjects' objects are persisted ones, fetched from a database as a user has them (an
// edit also remembers the value before, once, for change tracking); each workload has its own
// objects, so that observe-plain's have never been observed. The `@Observable` objects are
// created with the same values. `textA` alternates between the row's text and an edited text of
// the same length from round to round, so that every round assigns a different value.

/// The hand-written counterpart of the benchmark's model `Item`: the same properties, observed
/// by the `@Observable` macro.
@Observable
final class ObservableItem {
    var intA: Int = 0
    var intB: Int = 0
    var intC: Int = 0
    var realA: Double = 0
    var realB: Double = 0
    var textA: String = ""
    var textB: String = ""
    var textC: String = ""
    var note: String? = nil
    var active: Bool = false

    init(copying item: Item) {
        intA = item.intA
        intB = item.intB
        intC = item.intC
        realA = item.realA
        realB = item.realB
        textA = item.textA
        textB = item.textB
        textC = item.textC
        note = item.note
        active = item.active
    }
}

/// The two properties the observation workloads read and assign, in either kind of object.
protocol ObservedEditable: AnyObject, Observable {
    var intA: Int { get set }
    var textA: String { get set }
}

extension Item: ObservedEditable {}
extension ObservableItem: ObservedEditable {}

let observationWorkloads = ["observe-edit", "observe-plain"]
let observationSubject = "ActiveObjects"
let observationReference = "@Observable"

/// What the observation workloads measured: medians, and what each kind of object did when an
/// equal value was assigned while observed (checked untimed, before the rounds).
struct ObservationResults {
    var report = Report()
    var objects = 0
    /// Per contender: whether assigning an equal `Int`, and an equal `String`, called `onChange`.
    var notifiesOnEqualInt: [String: Bool] = [:]
    var notifiesOnEqualString: [String: Bool] = [:]
}

/// One kind of object under test: a workload's body over its own objects, by round.
private struct ObservationContender {
    let name: String
    let observeEdit: (_ round: Int) -> Int
    let observePlain: (_ round: Int) -> Int
}

/// The values the workloads assign to object `i`: its `intA` (equal), and its `textA` in even
/// rounds (the edited text) and odd rounds (the row's text).
private struct EditValues {
    let intA: [Int]
    let texts: [[String]]

    init(from items: [Item]) {
        intA = items.map(\.intA)
        let original = items.map(\.textA)
        texts = [original.map(EditValues.edited), original]
    }

    /// A different text of the same length (so that the checksums do not depend on the round).
    static func edited(_ text: String) -> String {
        String(text.dropLast()) + (text.hasSuffix("x") ? "y" : "x")
    }
}

/// observe-edit over `objects`: the number of `onChange` calls.
@inline(__always)
private func observeEdit<Object: ObservedEditable>(_ objects: [Object], _ values: EditValues, round: Int,
                                                   counter: LockedBox<Int>) -> Int {
    let before = counter.current
    let texts = values.texts[round % 2]
    for (i, object) in objects.enumerated() {
        withObservationTracking {
            _ = object.textA
            _ = object.intA
        } onChange: {
            counter.withLock { $0 += 1 }
        }
        object.intA = values.intA[i]   // equal: no notification
        object.textA = texts[i]        // different: onChange, once
    }
    return counter.current - before
}

/// observe-plain over `objects`: the same assignments, unobserved; the values read back.
@inline(__always)
private func observePlain<Object: ObservedEditable>(_ objects: [Object], _ values: EditValues, round: Int) -> Int {
    let texts = values.texts[round % 2]
    var checksum = 0
    for (i, object) in objects.enumerated() {
        object.intA = values.intA[i]
        object.textA = texts[i]
        checksum &+= object.intA &+ object.textA.utf8.count
    }
    return checksum
}

/// Untimed, on an object of its own: how many times `onChange` runs when an equal `Int` is
/// assigned, when an equal `String` is, and in all when two different `String`s are then
/// assigned (a tracking scope's observer runs once, at the first change, and is gone). Each
/// question has a scope of its own, ended by a different value (an observer an equal
/// assignment did not fire would otherwise fire with the next question's change).
private func probeNotifications<Object: ObservedEditable>(_ object: Object, different text: String)
    -> (equalInt: Int, equalString: Int, different: Int) {
    let counter = LockedBox(0)
    func tracked(equal assignEqual: () -> Void, different texts: [String]) -> (equal: Int, all: Int) {
        let before = counter.current
        withObservationTracking {
            _ = object.textA
            _ = object.intA
        } onChange: {
            counter.withLock { $0 += 1 }
        }
        assignEqual()
        let equal = counter.current - before
        for text in texts { object.textA = text }
        return (equal, counter.current - before)
    }
    let equalInt = tracked(equal: { object.intA = object.intA }, different: [text]).equal
    // An equal text in a storage of its own: compared by value, not by identity.
    let equalString = tracked(equal: { object.textA = String(decoding: Array(object.textA.utf8), as: UTF8.self) },
                              different: [text + "!", text]).equal
    let different = tracked(equal: {}, different: [text + "!", text]).all
    return (equalInt, equalString, different)
}

/// Runs observe-edit and observe-plain on N persisted `Item`s and N `ObservableItem`s, in a
/// database of their own in `directory`.
func runObservationWorkloads(sizes: Sizes, directory: URL) throws -> ObservationResults {
    var results = ObservationResults()
    guard observationWorkloads.contains(where: sizes.wants) else { return results }
    let names = [observationSubject, observationReference].filter { sizes.onlyContenders?.contains($0) ?? true }
    guard !names.isEmpty else { return results }
    let count = sizes.observeObjects
    results.objects = count

    let path = directory.appendingPathComponent("observation.sqlite").path
    try createDatabase(at: path)
    try populateDatabase(at: path, count: count + 1, seed: 0x0B5E)
    var options = Database.Options()
    options.journalMode = .wal
    let database = try Database(path: path, options: options)
    ActiveObject.defaultDatabase = database
    defer {
        ActiveObject.defaultDatabase = nil
        try? database.close()
    }

    // Each workload gets its own fetch (fresh objects, never observed); the last row is the probe's.
    let order = Item.all.order(by: "id")
    let editItems = try order.limit(count).all()
    let plainItems = try order.limit(count).all()
    guard editItems.count == count, plainItems.count == count,
          let probeItem = try Item.find(id: Int64(count + 1)) else {
        throw BenchError("observe: fetched \(editItems.count) and \(plainItems.count) objects, expected \(count) and a probe")
    }
    guard zip(editItems, plainItems).allSatisfy({ $0 !== $1 }) else {
        throw BenchError("observe: two fetches returned the same objects; observe-plain would edit observed objects")
    }
    let values = EditValues(from: editItems)
    let editObservables = editItems.map(ObservableItem.init(copying:))
    let plainObservables = plainItems.map(ObservableItem.init(copying:))

    // What an equal assignment does, untimed.
    let probeText = EditValues.edited(probeItem.textA)
    for name in names {
        let probe = name == observationSubject
            ? probeNotifications(probeItem, different: probeText)
            : probeNotifications(ObservableItem(copying: probeItem), different: probeText)
        results.notifiesOnEqualInt[name] = probe.equalInt > 0
        results.notifiesOnEqualString[name] = probe.equalString > 0
        log("  observe: \(name): onChange calls for an equal Int \(probe.equalInt), an equal String \(probe.equalString), two different Strings \(probe.different)")
        if name == observationSubject, probe != (0, 0, 1) {
            throw BenchError("observe: ActiveObjects called onChange \(probe.equalInt) times for an equal Int, \(probe.equalString) for an equal String, \(probe.different) for two different values (expected 0, 0, 1)")
        }
    }

    let counter = LockedBox(0)
    let all = [
        ObservationContender(
            name: observationSubject,
            observeEdit: { observeEdit(editItems, values, round: $0, counter: counter) },
            observePlain: { observePlain(plainItems, values, round: $0) }),
        ObservationContender(
            name: observationReference,
            observeEdit: { observeEdit(editObservables, values, round: $0, counter: counter) },
            observePlain: { observePlain(plainObservables, values, round: $0) }),
    ]
    let contenders = all.filter { names.contains($0.name) }

    for workload in observationWorkloads where sizes.wants(workload) {
        log(workload == "observe-edit"
            ? "observe-edit: \(count) objects, each tracked (textA, intA), an equal intA and a different textA assigned"
            : "observe-plain: \(count) objects, the same assignments unobserved")
        for contender in contenders { results.report.register(workload, contender.name) }
        // Every round (warm-ups included) assigns the other text: one round counter per workload.
        var expected: Int?
        for round in 0..<(sizes.warmups + sizes.observeRounds) {
            for k in contenders.indices {
                let contender = contenders[(k + round) % contenders.count]
                let body = workload == "observe-edit" ? contender.observeEdit : contender.observePlain
                let (milliseconds, checksum) = measure { body(round) }
                if workload == "observe-edit", contender.name == observationSubject, checksum != count {
                    throw BenchError("observe-edit: ActiveObjects called onChange \(checksum) times for \(count) objects, expected \(count)")
                }
                if let expected, expected != checksum {
                    throw BenchError("\(workload): \(contender.name) computed checksum \(checksum), expected \(expected)")
                }
                expected = checksum
                if round >= sizes.warmups { results.report.record(workload, contender.name, milliseconds) }
            }
        }
        log("  \(workload): done")
    }
    return results
}

/// The markdown table: both contenders, their ratio, and the time per object.
func printObservationTable(_ results: ObservationResults, sizes: Sizes) {
    let report = results.report
    guard !report.workloads.isEmpty else { return }
    print("")
    print("Observation: \(results.objects) objects per round, ActiveObjects' fetched from a database vs a hand-written `@Observable` class (medians of \(sizes.observeRounds) rounds, alternating; observe-edit: withObservationTracking reading textA and intA, then an equal intA and a different textA assigned; observe-plain: the same assignments, nobody observing):")
    print("")
    print("| workload | \(observationSubject) | \(observationReference) | ratio \(observationSubject)/\(observationReference) | per-object ns (\(observationSubject) / \(observationReference)) |")
    print("|---|---:|---:|---:|---:|")
    func perObject(_ milliseconds: Double?) -> String {
        milliseconds.map { format($0 * 1_000_000 / Double(results.objects), decimals: 1) } ?? "–"
    }
    for workload in report.workloads {
        let ours = report.median(workload, observationSubject)
        let theirs = report.median(workload, observationReference)
        let ratio = ours.flatMap { ours in theirs.map { format(ours / $0, decimals: 2) + "×" } } ?? "–"
        print("| \(workload) | \(ours.map { format($0, decimals: 3) + " ms" } ?? "–") | \(theirs.map { format($0, decimals: 3) + " ms" } ?? "–") | \(ratio) | \(perObject(ours)) / \(perObject(theirs)) |")
    }
    let equal = [observationSubject, observationReference].filter { results.notifiesOnEqualInt[$0] != nil }.map { name in
        let int = results.notifiesOnEqualInt[name] == true ? "notifies" : "does not notify"
        let string = results.notifiesOnEqualString[name] == true ? "notifies" : "does not notify"
        return "\(name) \(int) on an equal Int, \(string) on an equal String"
    }
    if !equal.isEmpty { print("\nEqual assignments while observed: \(equal.joined(separator: "; ")).") }
}
