import Foundation
import Testing
@testable import ActiveObjects

/// save / insert / update / upsert / delete / reload, dirty tracking, failed writes, schema creation.
@Suite struct ActiveObjectPersistenceTests {
    final class Person: ModelTestRecord {
        @Column var name = ""
        @Column var age = 0
        @Column var income: Double = 0
        @Column var rating: Double? = nil
        @Column("photo_data") var photo: Data? = nil
    }

    final class Account: ModelTestRecord {
        @Column(unique: true) var email = ""
        @Column var balance = 0
    }

    final class Entry: ModelTestRecord {
        @Column(references: Account.self, onDelete: .cascade) var accountId: Int64? = nil
        @Column var text = ""
    }

    struct HookFailure: Error, Equatable {}

    final class Guarded: ModelTestRecord {
        @Column(unique: true) var code = ""
        @Column var value: Double = 0
        var failWillSave = false
        override func validate() throws {
            if code.isEmpty { throw ValidationError("code", "must not be empty") }
        }
        override func willSave() throws {
            if failWillSave { throw HookFailure() }
        }
    }

    // MARK: Save

    @Test func saveInsertsThenUpdatesOnlyChangedColumnsThenNothing() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Person.createTable()
            let person = Person(); person.name = "Joe"; person.age = 30
            #expect(person.id == nil)
            let (_, insert) = try recorder.recording { try person.save() }
            #expect(insert == [#"INSERT INTO "person" ("name", "age", "income", "rating", "photo_data") VALUES (?, ?, ?, ?, ?)"#])
            let id = try #require(person.id)
            #expect(id == 1)
            #expect(person.hasChanges == false)

            person.age = 31
            let (_, update) = try recorder.recording { try person.save() }
            #expect(update == [#"UPDATE "person" SET "age" = ? WHERE "id" = ?"#])

            let (_, nothing) = try recorder.recording { try person.save() }
            #expect(nothing.isEmpty, "an unchanged save runs no SQL: \(nothing)")

            person.name = "Joseph"; person.rating = 2.5
            let (_, two) = try recorder.recording { try person.save() }
            #expect(two == [#"UPDATE "person" SET "name" = ?, "rating" = ? WHERE "id" = ?"#])

            // Setting a property to the value it already has is not a change.
            person.age = 31
            let (_, same) = try recorder.recording { try person.save() }
            #expect(same.isEmpty)
            #expect(try modelRowCount(db, "person") == 1)
            let stored = try #require(try Person.find(id: id))
            #expect(stored.name == "Joseph" && stored.age == 31 && stored.rating == 2.5)
        }
    }

    @Test func nilIsWrittenBackAsNull() throws {
        try withModelDB { db in
            try Person.createTable()
            let person = Person(); person.rating = 4.5; person.photo = Data([1, 2])
            try person.save()
            person.rating = nil
            person.photo = nil
            #expect(person.changedColumns == ["rating", "photo_data"])
            try person.save()
            let id = try #require(person.id)
            let types = try db.rows("SELECT typeof(rating), typeof(photo_data) FROM person WHERE id = ?", [id])
            #expect(try types[0][0] as String == "null")
            #expect(try types[0][1] as String == "null")
            #expect(try Person.find(id: id)?.rating == nil)
        }
    }

    @Test func explicitInsertUpdateUpsert() throws {
        try withModelDB { db in
            try Person.createTable()
            let person = Person(); person.name = "A"
            try person.insert()
            let id = try #require(person.id)
            // insert() again with the same id is a primary key violation.
            #expect(expectDatabaseError { try person.insert() }?.resultCode == .constraint)
            #expect(try modelRowCount(db, "person") == 1)

            // insert() with a chosen id.
            let chosen = Person(); chosen.id = 100; chosen.name = "C"
            try chosen.insert()
            #expect(try Person.find(id: 100)?.name == "C")

            person.name = "B"
            try person.update()
            #expect(try Person.find(id: id)?.name == "B")

            // update() without an id is recordNotFound.
            #expect(expectActiveObjectError { try Person().update() }?.isRecordNotFound == true)

            // upsert() of a new object inserts; of an existing one updates in place.
            let fresh = Person(); fresh.name = "U"
            try fresh.upsert()
            let freshID = try #require(fresh.id)
            fresh.age = 5
            try fresh.upsert()
            #expect(fresh.id == freshID)
            #expect(try Person.find(id: freshID)?.age == 5)
            #expect(try modelRowCount(db, "person") == 3)
        }
    }

    @Test func upsertConflictsOnPrimaryKeyAndUniqueColumnWithoutDeletingTheRow() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Account.createTable()
            try Entry.createTable()
            let account = Account(); account.email = "a@x"; account.balance = 1
            try account.save()
            let accountID = try #require(account.id)
            let entry = Entry(); entry.accountId = accountID; entry.text = "child"
            try entry.save()

            // Conflict on the primary key: another object with the same id.
            let samePK = Account(); samePK.id = accountID; samePK.email = "a@x"; samePK.balance = 2
            try samePK.upsert()
            #expect(samePK.id == accountID)
            #expect(try Account.find(id: accountID)?.balance == 2)
            #expect(try Entry.countAll() == 1, "the cascade child survives: the row was not deleted")

            // Conflict on the unique column: a new object (no id) with the same email.
            let sameEmail = Account(); sameEmail.email = "a@x"; sameEmail.balance = 3
            try sameEmail.upsert()
            #expect(sameEmail.id == accountID, "upsert adopts the existing row's id")
            #expect(try Account.find(id: accountID)?.balance == 3)
            #expect(try Account.countAll() == 1)
            #expect(try Entry.countAll() == 1, "the cascade child survives the unique-column upsert")
            #expect(try Entry.find(id: try requireID(entry))?.accountId == accountID)

            // No upsert is a REPLACE.
            #expect(!recorder.statements.contains { $0.uppercased().contains("REPLACE") })
            // Deleting the parent does cascade (the constraint is live).
            #expect(try account.delete())
            #expect(try modelRowCount(db, "entry") == 0)
        }
    }

    @Test func updateOfADeletedRowThrowsRecordNotFound() throws {
        try withModelDB { db in
            try Person.createTable()
            let person = Person(); person.name = "Gone"
            try person.save()
            let id = try #require(person.id)
            try db.execute("DELETE FROM person WHERE id = ?", [id])

            // Unchanged: explicit update() still reports the missing row.
            let unchanged = expectActiveObjectError { try person.update() }
            guard case let .recordNotFound(table, missing)? = unchanged else {
                Issue.record("expected recordNotFound, got \(String(describing: unchanged))"); return
            }
            #expect(table == "person" && missing == id)

            // Changed: both save() and update() report it, and keep the change.
            person.age = 9
            #expect(expectActiveObjectError { try person.save() }?.isRecordNotFound == true)
            #expect(expectActiveObjectError { try person.update() }?.isRecordNotFound == true)
            #expect(person.changedColumns == ["age"])
            #expect(try modelRowCount(db, "person") == 0)
        }
    }

    @Test func deleteReturnsWhetherARowWasDeleted() throws {
        try withModelDB { db in
            try Person.createTable()
            let person = Person(); person.name = "X"
            #expect(try person.delete() == false, "never saved")
            try person.save()
            #expect(try person.delete() == true)
            let deletedID = try #require(person.id, "a deleted object keeps its id")
            #expect(try person.delete() == false)
            #expect(try modelRowCount(db, "person") == 0)

            let other = Person(); try other.save()
            try db.execute("DELETE FROM person")
            #expect(try other.delete() == false, "the row was already gone")

            // A deleted object saved again puts its row back, with the same id.
            try person.save()
            #expect(person.id == deletedID)
            #expect(try Person.find(id: try requireID(person))?.name == "X")
        }
    }

    @Test func reloadReReadsTheRowAndDiscardsChanges() throws {
        try withModelDB { db in
            try Person.createTable()
            let person = Person(); person.name = "Joe"; person.age = 1
            try person.save()
            let id = try #require(person.id)
            try db.execute("UPDATE person SET age = 50, rating = 1.5 WHERE id = ?", [id])
            person.name = "Local"
            #expect(person.hasChanges)
            try person.reload()
            #expect(person.name == "Joe" && person.age == 50 && person.rating == 1.5)
            #expect(person.hasChanges == false)
            person.age = 51
            #expect(person.changedColumns == ["age"])

            try db.execute("DELETE FROM person")
            #expect(expectActiveObjectError { try person.reload() }?.isRecordNotFound == true)
            #expect(expectActiveObjectError { try Person().reload() }?.isRecordNotFound == true)
        }
    }

    @Test func dirtyTracking() throws {
        try withModelDB { _ in
            try Person.createTable()
            let person = Person()
            #expect(person.hasChanges == false, "a new object at its defaults has no changes")
            #expect(person.changedColumns.isEmpty)
            person.name = "N"
            person.photo = Data([9])
            #expect(person.hasChanges)
            #expect(person.changedColumns == ["name", "photo_data"])
            try person.save()
            #expect(person.changedColumns.isEmpty)
            let loaded = try #require(try Person.find(id: try requireID(person)))
            #expect(loaded.hasChanges == false)
            loaded.income = 10
            loaded.name = "N"
            #expect(loaded.changedColumns == ["income"])
            loaded.income = 0
            #expect(loaded.hasChanges == false, "back to the stored value is not a change")
        }
    }

    // MARK: Failed writes leave the object as it was

    @Test func failedInsertOnUniqueViolationKeepsTheObjectAndRetryWorks() throws {
        try withModelDB { db in
            try Account.createTable()
            let first = Account(); first.email = "dup"
            try first.save()
            let second = Account(); second.email = "dup"; second.balance = 7
            #expect(expectDatabaseError { try second.save() }?.resultCode == .constraint)
            #expect(second.id == nil)
            #expect(second.changedColumns == ["email", "balance"])
            #expect(try modelRowCount(db, "account") == 1)
            second.email = "unique"
            try second.save()
            #expect(second.id != nil && second.id != first.id)
            #expect(try Account.find(where: ["email": "unique"]).first?.balance == 7)
        }
    }

    @Test func failedUpdateOnUniqueViolationKeepsTheChangesAndRetryWorks() throws {
        try withModelDB { _ in
            try Account.createTable()
            let a = Account(); a.email = "a"; try a.save()
            let b = Account(); b.email = "b"; try b.save()
            b.email = "a"; b.balance = 3
            #expect(expectDatabaseError { try b.save() }?.resultCode == .constraint)
            #expect(b.changedColumns == ["email", "balance"])
            b.email = "c"
            try b.save()
            #expect(b.hasChanges == false)
            let stored = try #require(try Account.find(id: try requireID(b)))
            #expect(stored.email == "c" && stored.balance == 3)
        }
    }

    @Test func nanIsRefusedAndNothingIsWritten() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Guarded.createTable()
            recorder.reset()
            let object = Guarded(); object.code = "n"; object.value = .nan
            let error = expectActiveObjectError { try object.save() }
            guard case let .invalidValue(table, column, _)? = error else {
                Issue.record("expected invalidValue, got \(String(describing: error))"); return
            }
            #expect(table == "guarded" && column == "value")
            #expect(object.id == nil)
            #expect(recorder.statements.isEmpty, "nothing ran: \(recorder.statements)")
            object.value = 1
            try object.save()
            #expect(object.id != nil)

            object.value = -.nan
            #expect(expectActiveObjectError { try object.save() }?.isInvalidValue == true)
            #expect(try Guarded.find(id: try requireID(object))?.value == 1)
            #expect(try modelRowCount(db, "guarded") == 1)
        }
    }

    @Test func failedValidationAndThrowingWillSaveWriteNothingAndRetryWorks() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Guarded.createTable()
            recorder.reset()
            let object = Guarded(); object.value = 2
            #expect(expectActiveObjectError { try object.save() }?.isValidationFailed == true)
            #expect(object.id == nil && object.changedColumns == ["value"])

            object.code = "ok"; object.failWillSave = true
            #expect(throws: HookFailure.self) { try object.save() }
            #expect(object.id == nil && object.changedColumns == ["code", "value"])
            #expect(recorder.statements.isEmpty, "nothing ran: \(recorder.statements)")

            object.failWillSave = false
            try object.save()
            #expect(object.id != nil)
            #expect(try modelRowCount(db, "guarded") == 1)
        }
    }

    // MARK: Schema creation

    final class Widget: ModelTestRecord {
        @Column var name = ""
        @Column var count = 7
        @Column var label = "it's"
        @Column var ratio = 1.5
        @Column var flag = true
        @Column var created = Date(timeIntervalSince1970: 0)
        @Column var blob = Data([0xAB])
        @Column var note: String? = nil
    }

    @Test func migrateAddsMissingColumnsToAPopulatedTable() throws {
        try withModelDB { db in
            try db.execute(#"CREATE TABLE "widget" ("id" INTEGER PRIMARY KEY, "name" TEXT NOT NULL DEFAULT '')"#)
            try db.execute("INSERT INTO widget (name) VALUES ('old1')")
            try db.execute("INSERT INTO widget (name) VALUES ('old2')")
            try Widget.migrate()
            #expect(try modelTableColumns(db, "widget") == ["id", "name", "count", "label", "ratio", "flag", "created", "blob", "note"])
            let info = try db.rows("SELECT name, \"notnull\", dflt_value FROM pragma_table_info('widget')")
            var byName: [String: (Int, String?)] = [:]
            for row in info { byName[try row["name"]] = (try row["notnull"], try row["dflt_value"]) }
            #expect(byName["count"]?.0 == 1 && byName["count"]?.1 == "7")
            #expect(byName["label"]?.0 == 1 && byName["label"]?.1 == "'it''s'")
            #expect(byName["flag"]?.0 == 1 && byName["flag"]?.1 == "1")
            #expect(byName["note"]?.0 == 0)

            let old = try Widget.findAll()
            #expect(old.map(\.name) == ["old1", "old2"])
            for widget in old {
                #expect(widget.count == 7 && widget.label == "it's" && widget.ratio == 1.5 && widget.flag)
                #expect(widget.created == Date(timeIntervalSince1970: 0) && widget.blob == Data([0xAB]))
                #expect(widget.note == nil)
                #expect(widget.hasChanges == false)
            }
            let fresh = Widget(); fresh.name = "new"; try fresh.save()
            #expect(try Widget.countAll() == 3)
        }
    }

    @Test func createTableIsIdempotent() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Account.createTable()
            let account = Account(); account.email = "e"; try account.save()
            let columns = try modelTableColumns(db, "account")
            let indexes = try db.rows("SELECT name FROM pragma_index_list('account')").count
            recorder.reset()
            try Account.createTable()
            try Account.migrate()
            try Account.createTable()
            #expect(!recorder.statements.contains { $0.hasPrefix("ALTER") }, "\(recorder.statements)")
            #expect(try modelTableColumns(db, "account") == columns)
            #expect(try db.rows("SELECT name FROM pragma_index_list('account')").count == indexes)
            #expect(try Account.countAll() == 1)
        }
    }
}
