import Foundation
import Testing
@testable import ActiveObjects

/// validate(), willSave/didSave, willDelete/didDelete (API.md §7).
@Suite struct ValidationAndHooksTests {
    struct Refused: Error, Equatable { let hook: String }

    final class Hooked: ModelTestRecord {
        @Column var name = ""
        @Column var slug = ""
        @Column var saves = 0
        var log: [String] = []
        var failIn: Set<String> = []

        override func validate() throws {
            log.append("validate")
            if name.isEmpty { throw ValidationError("name", "must not be empty") }
        }
        override func willSave() throws {
            log.append("willSave")
            if failIn.contains("willSave") { throw Refused(hook: "willSave") }
            slug = name.lowercased()          // set in willSave: must be persisted
        }
        override func didSave() {
            log.append("didSave(id: \(id.map(String.init) ?? "nil"))")
        }
        override func willDelete() throws {
            log.append("willDelete")
            if failIn.contains("willDelete") { throw Refused(hook: "willDelete") }
        }
        override func didDelete() {
            log.append("didDelete(id: \(id.map(String.init) ?? "nil"))")
        }
    }

    @Test func hooksRunInOrderAroundInsertUpdateAndDelete() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try Hooked.createTable()
            let object = Hooked(); object.name = "Hello"
            try object.save()
            #expect(object.log == ["validate", "willSave", "didSave(id: 1)"], "didSave sees the new id")
            #expect(try Hooked.find(id: 1)?.slug == "hello", "a change made in willSave is written")
            #expect(object.hasChanges == false)

            object.log = []
            object.name = "World"
            try object.save()
            #expect(object.log == ["validate", "willSave", "didSave(id: 1)"])
            #expect(try Hooked.find(id: 1)?.slug == "world")

            object.log = []
            recorder.reset()
            #expect(try object.delete())
            #expect(object.log == ["willDelete", "didDelete(id: 1)"])
            #expect(recorder.statements == [#"DELETE FROM "hooked" WHERE "id" = ?"#])
        }
    }

    @Test func failedValidationThrowsValidationFailedAndWritesNothing() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Hooked.createTable()
            recorder.reset()
            let object = Hooked(); object.saves = 3
            do {
                try object.save()
                Issue.record("save() of an invalid object succeeded")
            } catch ActiveObjectError.validationFailed(let failure) {
                #expect(failure == ValidationError("name", "must not be empty"))
                #expect(failure.field == "name")
                #expect("\(ActiveObjectError.validationFailed(failure))".contains("name must not be empty"))
            }
            #expect(object.log == ["validate"], "no hook runs after a failed validation")
            #expect(object.id == nil)
            #expect(recorder.statements.isEmpty, "\(recorder.statements)")
            #expect(try modelRowCount(db, "hooked") == 0)

            // Every write path validates.
            for write in [{ try object.insert() }, { try object.upsert() }] as [() throws -> Void] {
                #expect(expectActiveObjectError(write)?.isValidationFailed == true)
            }
            #expect(try modelRowCount(db, "hooked") == 0)

            // An existing row is left untouched by an invalid update.
            object.name = "Valid"
            try object.save()
            object.name = ""
            object.saves = 9
            #expect(expectActiveObjectError { try object.save() }?.isValidationFailed == true)
            #expect(expectActiveObjectError { try object.update() }?.isValidationFailed == true)
            let stored = try #require(try Hooked.find(id: try requireID(object)))
            #expect(stored.name == "Valid" && stored.saves == 3)
            #expect(object.changedColumns == ["name", "saves"])
        }
    }

    @Test func throwingWillSaveCancelsTheWrite() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Hooked.createTable()
            recorder.reset()
            let object = Hooked(); object.name = "A"; object.failIn = ["willSave"]
            #expect(throws: Refused(hook: "willSave")) { try object.save() }
            #expect(object.log == ["validate", "willSave"], "didSave is not called")
            #expect(object.id == nil)
            #expect(recorder.statements.isEmpty)
            object.failIn = []
            try object.save()
            #expect(try modelRowCount(db, "hooked") == 1)
        }
    }

    @Test func throwingWillDeleteCancelsTheDelete() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Hooked.createTable()
            let object = Hooked(); object.name = "Keep"
            try object.save()
            let id = try requireID(object)
            object.failIn = ["willDelete"]
            object.log = []
            recorder.reset()
            #expect(throws: Refused(hook: "willDelete")) { _ = try object.delete() }
            #expect(object.log == ["willDelete"], "didDelete is not called")
            #expect(object.id == id, "the object keeps its id")
            #expect(recorder.statements.isEmpty)
            #expect(try modelRowCount(db, "hooked") == 1)
            object.failIn = []
            #expect(try object.delete())
            #expect(try modelRowCount(db, "hooked") == 0)
        }
    }

    @Test func bulkDeletesDoNotRunHooks() throws {
        try withModelDB { _ in
            try Hooked.createTable()
            let object = Hooked(); object.name = "A"; object.failIn = []
            try object.save()
            // Documented: delete(where:) and Query.delete() skip willDelete/didDelete.
            #expect(try Hooked.delete(where: ["name": "A"]) == 1)
        }
    }
}
