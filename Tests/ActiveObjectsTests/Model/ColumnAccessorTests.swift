import Foundation
import Testing
@testable import ActiveObjects

enum AccessorMood: String { case calm, busy }
extension AccessorMood: ColumnValue {}

struct AccessorStamp: Codable, Equatable {
    var at: Date
}

/// Reading, writing and encoding each column type through its accessor (the typed pointers
/// into the object), and the change tracking the wrappers keep.
@Suite struct ColumnAccessorTests {
    final class Sample: ModelTestRecord {
        @Column var int = 1
        @Column var int64: Int64 = 2
        @Column var double = 3.5
        @Column var string = "four"
        @Column var bool = true
        @Column var data = Data([6])
        @Column var optionalInt: Int? = nil
        @Column var optionalInt64: Int64? = 8
        @Column var optionalDouble: Double? = nil
        @Column var optionalString: String? = "ten"
        @Column var optionalBool: Bool? = nil
        @Column var optionalData: Data? = nil
        @Column var int8: Int8 = 13
        @Column var date = Date(timeIntervalSince1970: 14)
        @Column var uuid = UUID(uuidString: "00000000-0000-0000-0000-00000000000F")!
        @Column var decimal: Decimal = Decimal(string: "16.5")!
        @Column var mood: AccessorMood = .calm
        @JSONColumn var list: [String] = ["x"]
        @JSONColumn var stamp: AccessorStamp? = nil
    }

    let schema: ModelSchema
    let context = ValueContext()

    init() throws { schema = try ModelSchema.of(Sample.self) }

    func accessor(_ property: String) throws -> ColumnAccessor {
        schema.accessors[try schema.slot(forKey: property)]
    }

    func encode(_ object: Sample, _ property: String, context: ValueContext? = nil) throws -> DatabaseValue {
        let accessor = try accessor(property)
        return try object.withUnsafeObjectPointer { try accessor.encode(from: $0, context: context ?? self.context) }
    }

    func load(_ value: DatabaseValue, into object: Sample, _ property: String) throws -> Bool {
        let accessor = try accessor(property)
        return object.withUnsafeObjectPointer { accessor.load(value, into: $0, context: context) }
    }

    // MARK: Types

    @Test func nativeTypesAreRecognisedAndTheRestConvertThroughColumnValue() throws {
        let expected: [String: NativeType] = [
            "int": .int, "int64": .int64, "double": .double, "string": .string, "bool": .bool, "data": .data,
            "optionalInt": .optionalInt, "optionalInt64": .optionalInt64, "optionalDouble": .optionalDouble,
            "optionalString": .optionalString, "optionalBool": .optionalBool, "optionalData": .optionalData,
            "int8": NativeType.none, "date": .date, "uuid": NativeType.none, "decimal": .decimal,
            "mood": NativeType.none, "list": NativeType.none, "stamp": NativeType.none,
        ]
        for (property, native) in expected {
            #expect(try accessor(property).nativeType == native, "\(property)")
        }
    }

    @Test func theDeclaredTypeNullabilityAndNameFollowTheSwiftType() throws {
        #expect(try accessor("int").columnType == .integer)
        #expect(try accessor("double").columnType == .real)
        #expect(try accessor("string").columnType == .text)
        #expect(try accessor("data").columnType == .blob)
        #expect(try accessor("list").columnType == .text)
        #expect(try !accessor("int").isNullable)
        #expect(try accessor("optionalInt").isNullable)
        #expect(try accessor("stamp").isNullable)
        #expect(try !accessor("list").isNullable)
        #expect(try accessor("date").isDate)
        #expect(try !accessor("int").isDate)
        #expect(try accessor("int8").valueTypeName == "Int8")
        #expect(try accessor("optionalString").valueTypeName == "Optional<String>")
        #expect(try accessor("list").valueTypeName == "JSON Array<String>")
    }

    @Test func eachTypeEncodesWhatTheDatabaseStores() throws {
        let object = Sample()
        #expect(try encode(object, "int") == .integer(1))
        #expect(try encode(object, "int64") == .integer(2))
        #expect(try encode(object, "double") == .real(3.5))
        #expect(try encode(object, "string") == .text("four"))
        #expect(try encode(object, "bool") == .integer(1))
        #expect(try encode(object, "data") == .blob(Data([6])))
        #expect(try encode(object, "optionalInt") == .null)
        #expect(try encode(object, "optionalInt64") == .integer(8))
        #expect(try encode(object, "optionalDouble") == .null)
        #expect(try encode(object, "optionalString") == .text("ten"))
        #expect(try encode(object, "optionalBool") == .null)
        #expect(try encode(object, "optionalData") == .null)
        #expect(try encode(object, "int8") == .integer(13))
        #expect(try encode(object, "date") == .text("1970-01-01 00:00:14.000"))
        #expect(try encode(object, "uuid") == .text("00000000-0000-0000-0000-00000000000f"))
        #expect(try encode(object, "decimal") == .text("16.5"))
        #expect(try encode(object, "mood") == .text("calm"))
        #expect(try encode(object, "list") == .text(#"["x"]"#))
        #expect(try encode(object, "stamp") == .null)
    }

    @Test func nanIsRefusedEvenOnTheNativePath() throws {
        let object = Sample()
        object.double = .nan
        object.optionalDouble = .nan
        #expect(throws: ColumnValueError.self) { try encode(object, "double") }
        #expect(throws: ColumnValueError.self) { try encode(object, "optionalDouble") }
    }

    @Test func loadWritesThePropertyAndRefusesWhatDoesNotFit() throws {
        let object = Sample()
        #expect(try load(.integer(42), into: object, "int"))
        #expect(object.int == 42)
        #expect(try load(.text("hello"), into: object, "optionalString"))
        #expect(object.optionalString == "hello")
        #expect(try load(.null, into: object, "optionalString"))
        #expect(object.optionalString == nil)
        #expect(try load(.text("2014-09-23 10:11:12.000"), into: object, "date"))
        #expect(object.date == Date(timeIntervalSince1970: 1_411_467_072))
        #expect(try load(.text("busy"), into: object, "mood"))
        #expect(object.mood == .busy)
        #expect(try load(.text(#"["a","b"]"#), into: object, "list"))
        #expect(object.list == ["a", "b"])

        // Values that do not fit leave the property as it was.
        #expect(try !load(.integer(300), into: object, "int8"))
        #expect(object.int8 == 13)
        #expect(try !load(.null, into: object, "int"))
        #expect(object.int == 42)
        #expect(try !load(.text("nope"), into: object, "mood"))
        #expect(try !load(.text("{not json"), into: object, "list"))
        #expect(object.list == ["a", "b"])
        #expect(try !load(.text("not a uuid"), into: object, "uuid"))
    }

    @Test func jsonDatesFollowTheDateStrategy() throws {
        let object = Sample()
        object.stamp = AccessorStamp(at: Date(timeIntervalSince1970: 1_411_467_072))
        #expect(try encode(object, "stamp") == .text(#"{"at":"2014-09-23 10:11:12.000"}"#))
        let millis = ValueContext(dateStrategy: .unixMilliseconds)
        #expect(try encode(object, "stamp", context: millis) == .text(#"{"at":1411467072000}"#))
        let accessor = try accessor("stamp")
        let stored = try object.withUnsafeObjectPointer { try accessor.encode(from: $0, context: millis) }
        let reloaded = Sample()
        #expect(reloaded.withUnsafeObjectPointer { accessor.load(stored, into: $0, context: millis) })
        #expect(reloaded.stamp == object.stamp)
    }

    @Test func theCurrentValueIsReadBoxed() throws {
        let object = Sample()
        let accessor = try accessor("optionalString")
        let boxed = object.withUnsafeObjectPointer { accessor.value(from: $0) }
        #expect(boxed as? String? == "ten")
    }

    // MARK: Change tracking

    /// The value the object remembers for `property` from before its first assignment.
    func original(_ object: Sample, _ property: String) throws -> Any? {
        object.edits?.original(atOffset: try accessor(property).valueOffset)
    }

    func isChanged(_ object: Sample, _ property: String) throws -> Bool {
        let accessor = try accessor(property)
        let current = try encode(object, property)
        return object.withUnsafeObjectPointer {
            accessor.isChanged(in: $0, edits: object.edits, current: current, context: context)
        }
    }

    /// An object as if loaded: holding what a row holds, nothing edited.
    func loadedObject() -> Sample {
        let object = Sample()
        object.markLoaded(rowID: 1, state: .persisted)
        return object
    }

    @Test func aNewObjectTracksNothing() throws {
        let object = Sample()
        object.string = "changed"
        #expect(object.edits == nil, "a new object keeps no value before")
        #expect(object.assignmentBookkeeping == 0)
        #expect(try !isChanged(object, "string"))
    }

    @Test func aLoadedObjectRemembersTheValueBeforeItsFirstAssignment() throws {
        let object = loadedObject()
        #expect(object.edits == nil, "a loaded object keeps nothing until it is edited")
        #expect(try !isChanged(object, "string"))
        object.string = "five"
        #expect(try original(object, "string") as? String == "four")
        #expect(try isChanged(object, "string"))
        object.string = "six"
        #expect(try original(object, "string") as? String == "four", "only the first assignment is remembered")
        object.string = "four"
        #expect(try !isChanged(object, "string"), "back to the original value: no change")
        #expect(try !isChanged(object, "int"))
        #expect(try original(object, "int") == nil)
    }

    @Test func loadingAgainForgetsTheEdits() throws {
        let object = loadedObject()
        object.int = 7
        #expect(try isChanged(object, "int"))
        object.markLoaded(rowID: 1, state: .persisted)
        #expect(object.edits == nil)
        #expect(try !isChanged(object, "int"))
    }

    @Test func equalValuesAreNotChangesEvenWhenTheyAreOtherSwiftValues() throws {
        let object = loadedObject()
        object.double = 3.5
        #expect(try !isChanged(object, "double"))
        object.list = ["x"]
        #expect(try !isChanged(object, "list"))
        object.list = ["y"]
        #expect(try isChanged(object, "list"))
    }

    @Test func assignThroughTheAccessorTracksLikeAnAssignment() throws {
        let object = loadedObject()
        let accessor = try accessor("int")
        #expect(accessor.assign(.integer(9), to: object, context: context))
        #expect(object.int == 9)
        #expect(try isChanged(object, "int"))
        #expect(try original(object, "int") as? Int == 1)
        #expect(!accessor.assign(.text("nine"), to: object, context: context), "a value that does not fit")
        #expect(object.int == 9, "…stores nothing")
    }

    @Test func encodeOriginalRefusesAValueOfAnotherType() throws {
        #expect(throws: ColumnValueError.self) { _ = try accessor("int").encodeOriginal("text", context: context) }
        #expect(try accessor("int").encodeOriginal(5, context: context) == .integer(5))
        #expect(try accessor("list").encodeOriginal(["q"], context: context) == .text(#"["q"]"#))
    }
}
