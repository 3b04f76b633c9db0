import Foundation
import Testing
@testable import ActiveObjects

enum SchemaMood: String { case happy, sad, meh }
extension SchemaMood: ColumnValue {}

enum SchemaLevel: Int { case low = 1, high = 9 }
extension SchemaLevel: ColumnValue {}

struct SchemaAddress: Codable, Equatable {
    var street: String
    var zip: Int
}

/// Reflection, naming conventions, column types and invalid models.
@Suite struct ActiveObjectSchemaTests {
    // MARK: Models

    final class AllTypes: ModelTestRecord {
        @Column var int: Int = 0
        @Column var int8: Int8 = 0
        @Column var int16: Int16 = 0
        @Column var int32: Int32 = 0
        @Column var int64: Int64 = 0
        @Column var uint: UInt = 0
        @Column var uint8: UInt8 = 0
        @Column var uint16: UInt16 = 0
        @Column var uint32: UInt32 = 0
        @Column var bool: Bool = false
        @Column var double: Double = 0
        @Column var float: Float = 0
        @Column var string: String = ""
        @Column var data: Data = Data()
        @Column var date: Date = Date(timeIntervalSince1970: 0)
        @Column var uuid: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        @Column var url: URL = URL(string: "https://example.com")!
        @Column var decimal: Decimal = 0
        @Column var mood: SchemaMood = .happy
        @Column var level: SchemaLevel = .low
        @Column var optInt: Int? = nil
        @Column var optInt8: Int8? = nil
        @Column var optDouble: Double? = nil
        @Column var optString: String? = nil
        @Column var optData: Data? = nil
        @Column var optDate: Date? = nil
        @Column var optUUID: UUID? = nil
        @Column var optURL: URL? = nil
        @Column var optDecimal: Decimal? = nil
        @Column var optMood: SchemaMood? = nil
        @JSONColumn var tags: [String] = []
        @JSONColumn var address: SchemaAddress? = nil
        var scratch = 0
    }

    final class BlogPost: ModelTestRecord {
        @Column var title = ""
        @Column("body_text") var body = ""
        @Column(unique: true) var slug = ""
        @Column(indexed: true) var views = 0
    }

    final class Contact: ModelTestRecord {
        override class var primaryKey: String { "contactid" }
        @Column var name = ""
    }

    final class SnakeTrack: ModelTestRecord {
        override class var columnNaming: ColumnNaming { .snakeCase }
        @Column var lastPlayedDate: Date? = nil
        @Column var artistID = 0
        @Column("Explicit") var explicitName = ""
    }

    final class UpperTrack: ModelTestRecord {
        override class var columnNaming: ColumnNaming { .upperSnakeCase }
        @Column var lastPlayedDate: Date? = nil
        @Column var artistID = 0
        @Column("mixedCase") var explicitName = ""
    }

    final class CustomTrack: ModelTestRecord {
        override class var columnNaming: ColumnNaming { .custom { "c_" + $0.lowercased() } }
        @Column var artistID = 0
        @Column("kept") var other = ""
    }

    class Timestamped: ModelTestRecord {
        @Column var createdAt: Int64 = 1
        @Column var updatedAt: Int64 = 2
    }

    final class Note: Timestamped {
        @Column var text = ""
    }

    final class Person: ModelTestRecord {
        @Column var name = ""
        @Column var age = 0
        @Column var rating: Double? = nil
    }

    final class LeftThing: ModelTestRecord {
        @Column var label = ""
    }

    final class RightThing: ModelTestSecondRecord {
        @Column var label = ""
    }

    final class DuplicateNames: ModelTestRecord {
        @Column("value") var first = 0
        @Column("VALUE") var second = 0
    }

    final class DuplicatePropertyAndName: ModelTestRecord {
        @Column var age = 0
        @Column("age") var years = 0
    }

    final class EmptyName: ModelTestRecord {
        @Column("") var nothing = 0
    }

    /// A composite key must be made of declared columns.
    final class UndeclaredCompositeKey: ModelTestRecord {
        override class var primaryKeys: [String] { ["a", "b"] }
        @Column var a = 0
    }

    /// WITHOUT ROWID needs a key of declared columns.
    final class WithoutRowIDWithoutKey: ModelTestRecord {
        override class var withoutRowID: Bool { true }
        @Column var a = 0
    }

    /// A key column named twice.
    final class RepeatedKeyColumn: ModelTestRecord {
        override class var primaryKeys: [String] { ["a", "A"] }
        @Column var a = 0
    }

    final class Order: ModelTestRecord {
        @Column var order = 0
        @Column var group = ""
        @Column var when: Date? = nil
        @Column var select: String? = nil
    }

    final class Group: ModelTestRecord {
        @Column var name = ""
        @Column var from = 0
    }

    // MARK: Column types

    @Test func allColumnTypesRoundTripAtTheirLimits() throws {
        try withModelDB { db in
            try AllTypes.createTable()
            let object = AllTypes()
            object.int = Int.min
            object.int8 = Int8.min
            object.int16 = Int16.max
            object.int32 = Int32.min
            object.int64 = Int64.max
            object.uint = UInt(Int64.max)
            object.uint8 = UInt8.max
            object.uint16 = UInt16.max
            object.uint32 = UInt32.max
            object.bool = true
            object.double = -1234.5678e-9
            object.float = 3.25
            object.string = "héllo \"wörld\" 'x' \u{1F600} a\0b"
            object.data = Data([0, 1, 2, 0, 255])
            object.date = Date(timeIntervalSince1970: 1_400_000_000.5)
            object.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
            object.url = URL(string: "https://example.com/a%20b?q=1#frag")!
            object.decimal = Decimal(string: "12345678901234567890.123456789")!
            object.mood = .sad
            object.level = .high
            object.optInt = 42
            object.optInt8 = -7
            object.optDouble = .infinity
            object.optString = ""
            object.optData = Data()
            object.optDate = Date(timeIntervalSince1970: -86_400.25)
            object.optUUID = UUID()
            object.optURL = URL(string: "file:///tmp/x")!
            object.optDecimal = Decimal(string: "-0.000000000000000000001")!
            object.optMood = .meh
            object.tags = ["a", "b,c", "\"q\""]
            object.address = SchemaAddress(street: "Main St", zip: 12345)
            object.scratch = 99
            try object.save()
            let id = try #require(object.id)

            let loaded = try #require(try AllTypes.find(id: id))
            #expect(loaded.int == Int.min)
            #expect(loaded.int8 == Int8.min)
            #expect(loaded.int16 == Int16.max)
            #expect(loaded.int32 == Int32.min)
            #expect(loaded.int64 == Int64.max)
            #expect(loaded.uint == UInt(Int64.max))
            #expect(loaded.uint8 == UInt8.max)
            #expect(loaded.uint16 == UInt16.max)
            #expect(loaded.uint32 == UInt32.max)
            #expect(loaded.bool == true)
            #expect(loaded.double == -1234.5678e-9)
            #expect(loaded.float == 3.25)
            #expect(loaded.string == object.string)
            #expect(loaded.data == Data([0, 1, 2, 0, 255]))
            #expect(abs(loaded.date.timeIntervalSince1970 - 1_400_000_000.5) < 0.0005)
            #expect(loaded.uuid == object.uuid)
            #expect(loaded.url == object.url)
            #expect(loaded.decimal == object.decimal)
            #expect(loaded.mood == .sad)
            #expect(loaded.level == .high)
            #expect(loaded.optInt == 42)
            #expect(loaded.optInt8 == -7)
            #expect(loaded.optDouble == .infinity)
            #expect(loaded.optString == "")
            #expect(loaded.optData == Data())
            let optDate = try #require(loaded.optDate)
            #expect(abs(optDate.timeIntervalSince1970 - -86_400.25) < 0.0005)
            #expect(loaded.optUUID == object.optUUID)
            #expect(loaded.optURL == object.optURL)
            #expect(loaded.optDecimal == object.optDecimal)
            #expect(loaded.optMood == .meh)
            #expect(loaded.tags == ["a", "b,c", "\"q\""])
            #expect(loaded.address == SchemaAddress(street: "Main St", zip: 12345))
            #expect(loaded.scratch == 0, "non-@Column properties are not persisted")
            #expect(loaded.hasChanges == false)

            // Storage: what SQLite actually holds.
            let row = try #require(try db.rows("""
                SELECT typeof("bool"), "bool", typeof("data"), typeof("optData"), typeof("decimal"), "decimal",
                       "mood", "level", "tags", typeof("uuid"), "uuid"
                FROM all_types WHERE id = ?
                """, [id]).first)
            #expect(try row[0] as String == "integer")
            #expect(try row[1] as Int == 1)
            #expect(try row[2] as String == "blob")
            #expect(try row[3] as String == "blob", "an empty Data is an empty BLOB, not NULL")
            #expect(try row[4] as String == "text")
            #expect(try row[5] as String == "12345678901234567890.123456789")
            #expect(try row[6] as String == "sad")
            #expect(try row[7] as Int == 9)
            #expect(try row[8] as String == #"["a","b,c","\"q\""]"#)
            #expect(try row[9] as String == "text")
            #expect(try row[10] as String == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        }
    }

    @Test func nilsRoundTripAsNull() throws {
        try withModelDB { db in
            try AllTypes.createTable()
            let object = AllTypes()
            try object.save()
            let id = try #require(object.id)
            let nulls: Int? = try db.scalar("""
                SELECT ("optInt" IS NULL) + ("optString" IS NULL) + ("optData" IS NULL) + ("optDate" IS NULL)
                     + ("optUUID" IS NULL) + ("optURL" IS NULL) + ("optDecimal" IS NULL) + ("optMood" IS NULL)
                     + ("address" IS NULL) + ("optDouble" IS NULL) + ("optInt8" IS NULL)
                FROM all_types WHERE id = ?
                """, [id])
            #expect(nulls == 11)
            let loaded = try #require(try AllTypes.find(id: id))
            #expect(loaded.optInt == nil && loaded.optString == nil && loaded.optData == nil)
            #expect(loaded.optDate == nil && loaded.optUUID == nil && loaded.optURL == nil)
            #expect(loaded.optDecimal == nil && loaded.optMood == nil && loaded.address == nil)
        }
    }

    @Test func declaredTypesAndNullability() throws {
        try withModelDB { db in
            try AllTypes.createTable()
            let info = try db.rows("SELECT name, type, \"notnull\" FROM pragma_table_info('all_types')")
            var types: [String: (String, Int)] = [:]
            for row in info { types[try row["name"]] = (try row["type"], try row["notnull"]) }
            #expect(types["id"]?.0 == "INTEGER")
            for name in ["int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "bool", "level"] {
                #expect(types[name]?.0 == "INTEGER", "\(name)")
                #expect(types[name]?.1 == 1, "\(name) is NOT NULL")
            }
            for name in ["double", "float"] { #expect(types[name]?.0 == "REAL", "\(name)") }
            for name in ["string", "date", "uuid", "url", "decimal", "mood", "tags"] {
                #expect(types[name]?.0 == "TEXT", "\(name)")
            }
            #expect(types["data"]?.0 == "BLOB")
            for name in ["optInt", "optDouble", "optString", "optData", "optDate", "optUUID", "optURL",
                         "optDecimal", "optMood", "address"] {
                #expect(types[name]?.1 == 0, "\(name) is nullable")
            }
            #expect(types["scratch"] == nil)
            #expect(try modelTableColumns(db, "all_types").first == "id")
        }
    }

    // MARK: Naming

    @Test func defaultTableNameIsSnakeCaseOfTheClassName() throws {
        #expect(BlogPost.tableName == "blog_post")
        #expect(Person.tableName == "person")
        #expect(AllTypes.tableName == "all_types")
        #expect(Contact.tableName == "contact")
        #expect(ColumnNaming.snakeCased("URLValue") == "url_value")
    }

    @Test func explicitColumnNameUniqueAndIndexed() throws {
        try withModelDB { db in
            try BlogPost.createTable()
            #expect(try modelTableColumns(db, "blog_post") == ["id", "title", "body_text", "slug", "views"])

            let indexes = try db.rows("SELECT name, \"unique\" FROM pragma_index_list('blog_post')")
            var indexedColumns: [String: Bool] = [:]
            for index in indexes {
                let name: String = try index["name"]
                let unique: Int = try index["unique"]
                let columns = try db.rows("SELECT name FROM pragma_index_info(?)", [name]).map { try $0["name"] as String }
                #expect(columns.count == 1)
                indexedColumns[columns[0]] = unique == 1
            }
            #expect(indexedColumns["slug"] == true, "slug has a UNIQUE index")
            #expect(indexedColumns["views"] == false, "views has a plain index")
            #expect(indexedColumns["title"] == nil)

            let post = BlogPost(); post.title = "T"; post.body = "B"; post.slug = "s"
            try post.save()
            let again = BlogPost(); again.slug = "s"
            let error = expectDatabaseError { try again.save() }
            #expect(error?.resultCode == .constraint)
            let body: String? = try db.scalar("SELECT body_text FROM blog_post")
            #expect(body == "B")
            #expect(try BlogPost.find(where: ["body": "B"]).count == 1, "criteria accept the property name")
            #expect(try BlogPost.find(where: ["body_text": "B"]).count == 1, "criteria accept the column name")
        }
    }

    @Test func primaryKeyOverride() throws {
        try withModelDB { db in
            try Contact.createTable()
            #expect(try modelTableColumns(db, "contact") == ["contactid", "name"])
            let contact = Contact(); contact.name = "Ann"
            try contact.save()
            let id = try #require(contact.id)
            let stored: Int64? = try db.scalar("SELECT contactid FROM contact WHERE name = 'Ann'")
            #expect(stored == id)
            #expect(try Contact.find(id: id)?.name == "Ann")
            #expect(try Contact.find(where: ["contactid": id]).count == 1)
            #expect(try Contact.find(where: ["id": id]).count == 1, "id designates the primary key too")
            contact.name = "Anna"
            try contact.save()
            #expect(try Contact.find(id: id)?.name == "Anna")
            #expect(try contact.delete())
            #expect(try Contact.countAll() == 0)
        }
    }

    @Test func columnNamingStrategies() throws {
        try withModelDB { db in
            try SnakeTrack.createTable()
            try UpperTrack.createTable()
            try CustomTrack.createTable()
            #expect(try modelTableColumns(db, "snake_track") == ["id", "last_played_date", "artist_id", "Explicit"])
            #expect(try modelTableColumns(db, "upper_track") == ["id", "LAST_PLAYED_DATE", "ARTIST_ID", "mixedCase"])
            #expect(try modelTableColumns(db, "custom_track") == ["id", "c_artistid", "kept"])

            let track = UpperTrack(); track.artistID = 7; track.explicitName = "x"
            try track.save()
            #expect(try UpperTrack.find(where: ["artistID": 7]).count == 1)
            #expect(try UpperTrack.find(where: ["ARTIST_ID": 7]).count == 1)
            #expect(try UpperTrack.where(\.$artistID == 7).count() == 1)
            #expect(track.changedColumns.isEmpty)
            track.artistID = 8
            #expect(track.changedColumns == ["ARTIST_ID"])
            #expect(ColumnNaming.upperSnakeCase.columnName(for: "artistID") == "ARTIST_ID")
            #expect(ColumnNaming.snakeCase.columnName(for: "lastPlayedDate") == "last_played_date")
            #expect(ColumnNaming.asIs.columnName(for: "lastPlayedDate") == "lastPlayedDate")
        }
    }

    @Test func columnsDeclaredOnAnIntermediateSuperclass() throws {
        try withModelDB { db in
            try Note.createTable()
            #expect(try modelTableColumns(db, "note") == ["id", "createdAt", "updatedAt", "text"])
            let note = Note(); note.text = "hi"; note.createdAt = 10; note.updatedAt = 20
            try note.save()
            let noteID = try #require(note.id)
            let loaded = try #require(try Note.find(id: noteID))
            #expect(loaded.createdAt == 10 && loaded.updatedAt == 20 && loaded.text == "hi")
            loaded.updatedAt = 30
            #expect(loaded.changedColumns == ["updatedAt"])
            try loaded.save()
            #expect(try Note.where(\.$updatedAt == 30).count() == 1)
        }
    }

    @Test func twoModelClassesInTwoDatabases() throws {
        let second = try Database.inMemory()
        try withModelDB(second: second) { first in
            try LeftThing.createTable()
            try RightThing.createTable()
            let left = LeftThing(); left.label = "left"
            let right = RightThing(); right.label = "right"
            try left.save()
            try right.save()
            #expect(try modelTableColumns(first, "left_thing") == ["id", "label"])
            #expect(try modelTableColumns(first, "right_thing").isEmpty)
            #expect(try modelTableColumns(second, "right_thing") == ["id", "label"])
            #expect(try modelTableColumns(second, "left_thing").isEmpty)
            #expect(try LeftThing.findAll().map(\.label) == ["left"])
            #expect(try RightThing.findAll().map(\.label) == ["right"])
        }
    }

    @Test func modelWithoutDatabaseThrowsNoDatabase() throws {
        // Outside withModelDB the task-local database is nil.
        let error = expectActiveObjectError { _ = try Person.findAll() }
        #expect(error?.isNoDatabase == true)
        let save = expectActiveObjectError { try Person().save() }
        #expect(save?.isNoDatabase == true)
    }

    @Test func descriptionListsIdAndProperties() throws {
        try withModelDB { _ in
            try Person.createTable()
            let person = Person(); person.name = "Joe"; person.age = 30
            #expect(person.description == #"Person(id: nil, name: "Joe", age: 30, rating: nil)"#)
            try person.save()
            person.rating = 4.5
            #expect(person.description == #"Person(id: 1, name: "Joe", age: 30, rating: 4.5)"#)
            #expect("\(person)".hasPrefix(#"Person(id: 1, name: "Joe", age: 30"#))
        }
    }

    // MARK: Invalid models

    @Test(arguments: [
        (DuplicateNames.self as ActiveObject.Type, "value"),
        (DuplicatePropertyAndName.self as ActiveObject.Type, "age"),
        (EmptyName.self as ActiveObject.Type, "empty"),
        (UndeclaredCompositeKey.self as ActiveObject.Type, "\"b\""),
        (WithoutRowIDWithoutKey.self as ActiveObject.Type, "WITHOUT ROWID"),
        (RepeatedKeyColumn.self as ActiveObject.Type, "twice"),
    ])
    func invalidModelsThrowAtFirstUseEveryTime(model: ActiveObject.Type, reasonFragment: String) throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            for attempt in 1...3 {
                do {
                    _ = try ModelSchema.of(model)
                    Issue.record("attempt \(attempt): \(model) was accepted")
                } catch let error as ActiveObjectError {
                    guard case let .invalidModel(name, reason) = error else {
                        Issue.record("attempt \(attempt): wrong error \(error)")
                        continue
                    }
                    #expect(name == String(describing: model))
                    #expect(reason.lowercased().contains(reasonFragment.lowercased()), "\(reason)")
                }
            }
        }
        #expect(recorder.statements.isEmpty, "no SQL for an invalid model: \(recorder.statements)")
    }

    @Test func invalidModelThrowsFromEveryEntryPoint() throws {
        try withModelDB { _ in
            #expect(expectActiveObjectError { try DuplicateNames.createTable() }?.isInvalidModel == true)
            #expect(expectActiveObjectError { try DuplicateNames.createTable() }?.isInvalidModel == true)
            #expect(expectActiveObjectError { _ = try DuplicateNames.findAll() }?.isInvalidModel == true)
            #expect(expectActiveObjectError { _ = try DuplicateNames.find(id: 1) }?.isInvalidModel == true)
            #expect(expectActiveObjectError { try DuplicateNames().save() }?.isInvalidModel == true)
            #expect(expectActiveObjectError { _ = try EmptyName.where(["nothing": 1]).count() }?.isInvalidModel == true)
            #expect(expectActiveObjectError { try EmptyName().save() }?.isInvalidModel == true)
        }
    }

    // MARK: Keywords as names

    @Test func keywordTableAndColumnNamesWork() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try Order.createTable()
            try Group.createTable()
            #expect(Order.tableName == "order")
            #expect(Group.tableName == "group")
            let order = Order(); order.order = 3; order.group = "g"; order.when = Date(timeIntervalSince1970: 100)
            order.select = "s"
            try order.save()
            let other = Order(); other.order = 1; other.group = "h"
            try other.save()
            order.order = 4
            try order.save()
            let group = Group(); group.name = "admins"; group.from = 2
            try group.save()

            #expect(try Order.find(where: ["order": 4, "group": "g"]).count == 1)
            #expect(try Order.where(\.$when == nil).count() == 1)
            #expect(try Order.all.order(by: \.$order, .descending).pluck(\.$order) == [4, 1])
            #expect(try Order.all.order(by: "group").pluck(\.$group) == ["g", "h"])
            #expect(try Order.all.max(\.$order) == 4)
            #expect(try Group.findFirst(where: ["from": 2])?.name == "admins")
            #expect(try Order.delete(where: ["select": nil]) == 1)
            #expect(try Order.countAll() == 1)
        }
        #expect(recorder.statements.contains(#"UPDATE "order" SET "order" = ? WHERE "id" = ?"#))
    }
}
