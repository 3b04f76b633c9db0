// Exits 0 when the model compiled without reflection metadata is refused with an
// `invalidModel` error that names the build setting (and writes nothing), and the same model
// with reflection metadata round-trips; prints what happened either way.
import ActiveObjects
import Foundation
import ReflectedModels
import StrippedModels

/// A subclass with reflection metadata of a superclass without it.
final class Derived: StrippedBase {
    @Column var extra: Int = 0
}

var failures: [String] = []

let database = try Database.inMemory()
ActiveObject.defaultDatabase = database

// The control: the same declaration with reflection metadata works.
try ReflectedPerson.createTable()
let control = ReflectedPerson()
control.name = "Ann"
control.age = 41
control.tags = ["a"]
try control.save()
if let row = try ReflectedPerson.find(id: control.id ?? -1), row.name == "Ann", row.age == 41, row.tags == ["a"] {
    print("control: ReflectedPerson round-trips: \(row)")
} else {
    failures.append("the control model with reflection metadata did not round-trip")
}

/// Runs `body`, which must throw `invalidModel` naming the build setting.
@MainActor func expectRefusal(_ label: String, _ body: () throws -> Void) {
    do {
        try body()
        failures.append("\(label): no error — the model was used without its columns")
    } catch let error as ActiveObjectError {
        print("\(label): \(error)")
        guard case .invalidModel = error else {
            failures.append("\(label): expected invalidModel, got \(error)")
            return
        }
        let text = "\(error)"
        if !text.contains("-disable-reflection-metadata") || !text.contains("Reflection Metadata Level") {
            failures.append("\(label): the message does not name the build setting")
        }
    } catch {
        failures.append("\(label): unexpected error \(error)")
    }
}

expectRefusal("StrippedPerson.createTable()") { try StrippedPerson.createTable() }
expectRefusal("StrippedPerson.save()") {
    let person = StrippedPerson()
    person.name = "Bob"
    try person.save()
}
expectRefusal("Derived.createTable()") { try Derived.createTable() }

let tables: [String] = try database.rows("SELECT name FROM sqlite_master WHERE type = 'table'").map { try $0["name"] }
if tables.contains(where: { $0 != "reflected_person" }) {
    failures.append("tables were created for refused models: \(tables)")
}

if failures.isEmpty {
    print("check-reflection: ok")
} else {
    for failure in failures { print("check-reflection: FAILED: \(failure)") }
    exit(1)
}
