import Foundation
import Testing
@testable import ActiveObjects

// A `@Column` wrapped in another property wrapper, or declared in a struct, no longer compiles
// (the wrapper is only usable through its enclosing-instance subscript, on an ActiveObject):
// what is left to catch at run time is a wrapper the prototype's init() creates but that is not
// a stored property of a model object.

/// How each column's declared options reach its property (``ColumnDeclarations``), and what
/// happens to a column reflection cannot see: a clear `invalidModel`, never a missing column.
@Suite struct ColumnDeclarationsTests {
    final class ColumnInsideOptional: ModelTestRecord {
        @Column var plain = ""
        var maybe: Column<Int>? = Column(wrappedValue: 1)
    }

    final class ColumnsInsideArray: ModelTestRecord {
        @Column var plain = ""
        var spares = [Column(wrappedValue: 1), Column(wrappedValue: 2)]
    }

    /// Creates a column wrapper in a closure it runs, and keeps nothing of it.
    final class ColumnInClosure: ModelTestRecord {
        @Column var plain = ""
        var made: Int = { _ = Column(wrappedValue: 1); return 1 }()
    }

    final class CustomMirrored: ModelTestRecord, CustomReflectable {
        @Column var name = ""
        var customMirror: Mirror { Mirror(self, children: ["name": name]) }
    }

    final class CheckChild: ModelTestRecord {
        @Column var label = "child"
    }

    /// Holds an object of another model, created by its own initializer (so while this
    /// class's prototype is being built): that object's columns are not this class's.
    final class HoldsAnotherModel: ModelTestRecord {
        @Column var name = ""
        var child = CheckChild()
        var children: [CheckChild] = [CheckChild(), CheckChild()]
        @Column var after = 0
    }

    final class Plain: ModelTestRecord {
        @Column var first = ""
        @Column var second = 0
        @JSONColumn var third: [String] = []
    }

    // MARK: Options reach their own property

    /// Columns without defaults (which take no options: Swift refuses arguments without an
    /// initial value), assigned by the init() in another order than declared, between columns
    /// with defaults and options: the init() initializes the latter first.
    final class AssignedOutOfOrder: ModelTestRecord {
        @Column var first: String
        @Column(unique: true) var email = ""
        @Column var last: String
        @Column("nick_name", indexed: true) var nick = ""

        required init() {
            last = ""
            first = ""
            super.init()
        }
    }

    /// Defaults and init()-assigned columns interleaved, of one type.
    final class Interleaved: ModelTestRecord {
        @Column("aa") var a = 1
        @Column var b: Int
        @Column("cc") var c = 3
        @Column var d: Int

        required init() {
            d = 4
            b = 2
            super.init()
        }
    }

    class Base: ModelTestRecord {
        @Column var one: Int
        @Column("base_two") var two = 2

        required init() {
            one = 1
            super.init()
        }
    }

    final class Derived: Base {
        @Column var three: Int
        @Column("derived_four") var four = 4

        required init() {
            three = 3
            super.init()
        }
    }

    @Test func optionsReachTheirPropertyWhateverTheOrderTheInitAssignsThem() throws {
        try withModelDB { db in
            let schema = try ModelSchema.of(AssignedOutOfOrder.self)
            #expect(schema.columns.map(\.propertyName) == ["first", "email", "last", "nick"])
            #expect(schema.columns.map(\.name) == ["first", "email", "last", "nick_name"])
            #expect(schema.columns.map(\.options.unique) == [false, true, false, false])
            #expect(schema.columns.map(\.options.indexed) == [false, false, false, true])
            let interleaved = try ModelSchema.of(Interleaved.self)
            #expect(interleaved.columns.map(\.name) == ["aa", "b", "cc", "d"])
            let derived = try ModelSchema.of(Derived.self)
            #expect(derived.columns.map(\.name) == ["one", "base_two", "three", "derived_four"])

            // And the table is what the declarations say.
            try AssignedOutOfOrder.createTable()
            let person = AssignedOutOfOrder()
            person.first = "Ada"
            person.email = "ada@example.com"
            person.last = "Lovelace"
            try person.save()
            let row = try #require(try db.rows("SELECT first, email, last FROM assigned_out_of_order").first)
            #expect(try row["first"] == DatabaseValue.text("Ada"))
            #expect(try row["last"] == DatabaseValue.text("Lovelace"))
            let twin = AssignedOutOfOrder()
            twin.email = "ada@example.com"
            #expect(throws: DatabaseError.self, "email is the UNIQUE column") { try twin.save() }
        }
    }

    // MARK: Models that hide a column

    static let hidingModels: [(ActiveObject.Type, String)] = [
        (ColumnInsideOptional.self, "property maybe holds a @Column"),
        (ColumnsInsideArray.self, "property spares holds a @Column"),
        (CustomMirrored.self, "CustomReflectable"),
        (ColumnInClosure.self, "cannot see"),
    ]

    @Test(arguments: hidingModels)
    func aColumnReflectionCannotSeeIsInvalidModelNeverAMissingColumn(model: ActiveObject.Type, fragment: String) throws {
        try withModelDB { db in
            for _ in 0..<2 {
                let error = expectActiveObjectError { _ = try ModelSchema.of(model) }
                guard case let .invalidModel(name, reason)? = error else {
                    Issue.record("expected invalidModel for \(model), got \(String(describing: error))")
                    return
                }
                #expect(name == String(describing: model))
                #expect(reason.contains(fragment), "\(reason)")
            }
            // Nothing was created for it.
            let tables = try db.rows("SELECT name FROM sqlite_master")
            #expect(tables.isEmpty)
        }
    }

    @Test func theEntryPointsOfAHidingModelThrowInvalidModelAndWriteNothing() throws {
        try withModelDB { db in
            #expect(expectActiveObjectError { try ColumnInsideOptional.createTable() }?.isInvalidModel == true)
            let object = ColumnInsideOptional()
            object.plain = "x"
            #expect(expectActiveObjectError { try object.save() }?.isInvalidModel == true)
            #expect(object.id == nil)
            let tables = try db.rows("SELECT name FROM sqlite_master")
            #expect(tables.isEmpty)
        }
    }

    @Test func objectsOfOtherModelsCreatedByThePrototypesInitAreIgnored() throws {
        try withModelDB { _ in
            let schema = try ModelSchema.of(HoldsAnotherModel.self)
            #expect(schema.columns.map(\.name) == ["name", "after"])
            try CheckChild.createTable()
            try HoldsAnotherModel.createTable()
            let holder = HoldsAnotherModel()
            holder.name = "h"
            try holder.save()
            try holder.child.save()
            #expect(try HoldsAnotherModel.findAll().map(\.name) == ["h"])
            #expect(try CheckChild.findAll().map(\.label) == ["child"])
        }
    }

    /// Creates an object of another model in its init() and lets it go at once (as
    /// `print(CheckChild())` would).
    final class DescribesAnotherModel: ModelTestRecord {
        @Column var name = ""
        var describedChild = ""

        required init() {
            super.init()
            describedChild = String(describing: CheckChild())
        }
    }

    /// Creates objects of another model in property initializers, kept or not.
    final class CreatesOtherModelsInPropertyInitializers: ModelTestRecord {
        var helper = CheckChild()
        @Column var name = ""
        var discarded: Int = { _ = CheckChild(); return 1 }()
        var byLabel: [String: CheckChild] = ["a": CheckChild()]
        @JSONColumn var tags: [String] = []
    }

    @Test func objectsOfOtherModelsCreatedAndDroppedByThePrototypesInitAreIgnored() throws {
        try withModelDB { _ in
            let describing = try ModelSchema.of(DescribesAnotherModel.self)
            #expect(describing.columns.map(\.name) == ["name"])
            #expect((describing.prototype as? DescribesAnotherModel)?.describedChild.hasPrefix("CheckChild(") == true)
            let creating = try ModelSchema.of(CreatesOtherModelsInPropertyInitializers.self)
            #expect(creating.columns.map(\.name) == ["name", "tags"])
            try CreatesOtherModelsInPropertyInitializers.createTable()
            let object = CreatesOtherModelsInPropertyInitializers()
            object.name = "n"
            try object.save()
            #expect(try CreatesOtherModelsInPropertyInitializers.findAll().map(\.name) == ["n"])
        }
    }

    // MARK: The matching itself, with a discovery that misses columns

    /// A prototype of `type` with what its creation recorded.
    func prototype<T: ActiveObject>(_ type: T.Type) -> (ActiveObject, [PrototypeEvent]) {
        PrototypeConstruction.withSchemaBuild(of: type) { build in
            build.makePrototype { type.init() }
        }
    }

    @Test func eachDiscoveredColumnGetsItsDeclarationsOptions() throws {
        let (object, events) = prototype(AssignedOutOfOrder.self)
        let discovery = try ColumnDiscovery(prototype: object)
        let options = try ColumnDeclarations.options(prototype: object, events: events, discovery: discovery)
        #expect(options.map(\.name) == [nil, nil, nil, "nick_name"])
        #expect(options.map(\.unique) == [false, true, false, false])
    }

    @Test func aModelWhoseColumnsTheRuntimeDoesNotDescribeNamesTheBuildSetting() throws {
        let (object, events) = prototype(Plain.self)
        let discovery = try ColumnDiscovery(prototype: object)
        // What a module built with -disable-reflection-metadata gives: no fields of its own.
        let stripped = ColumnDiscovery(columns: [], fields: discovery.fields.filter { !$0.name.hasPrefix("_") })
        let error = expectActiveObjectError {
            _ = try ColumnDeclarations.options(prototype: object, events: events, discovery: stripped)
        }
        guard case let .invalidModel(model, reason)? = error else {
            Issue.record("expected invalidModel, got \(String(describing: error))")
            return
        }
        #expect(model == "Plain")
        #expect(reason.contains("-disable-reflection-metadata"))
        #expect(reason.contains("Reflection Metadata Level"))
        #expect(reason.contains("created 3"))
        #expect(reason.contains("describes only 0"))
        #expect(error?.localizedDescription.contains("-disable-reflection-metadata") == true)
    }

    @Test func aColumnMissingFromTheDiscoveryIsRefusedWhateverItsPosition() throws {
        let (object, events) = prototype(Plain.self)
        let discovery = try ColumnDiscovery(prototype: object)
        for dropped in discovery.columns.indices {
            var columns = discovery.columns
            columns.remove(at: dropped)
            // The field is still described: the column is hidden inside it.
            let partial = ColumnDiscovery(columns: columns, fields: discovery.fields)
            let error = expectActiveObjectError {
                _ = try ColumnDeclarations.options(prototype: object, events: events, discovery: partial)
            }
            #expect(error?.isInvalidModel == true)
        }
    }

    @Test func aDeclarationOfAnotherWrapperTypeIsRefused() throws {
        let (object, events) = prototype(Plain.self)
        let discovery = try ColumnDiscovery(prototype: object)
        let columns = discovery.columns
        // The first two columns swapped: a Column<Int> where a Column<String> was declared.
        let swapped = ColumnDiscovery(columns: [columns[1], columns[0], columns[2]], fields: discovery.fields)
        let error = expectActiveObjectError {
            _ = try ColumnDeclarations.options(prototype: object, events: events, discovery: swapped)
        }
        guard case let .invalidModel(_, reason)? = error else {
            Issue.record("expected invalidModel, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("property second is a Column<Int>"), "\(reason)")
    }

    @Test func aDeclarationNoObjectClaimsIsRefused() throws {
        let (object, events) = prototype(Plain.self)
        let discovery = try ColumnDiscovery(prototype: object)
        // A wrapper created before the prototype's own, and never stored in an object.
        let stray = PrototypeEvent.declaration(ColumnDeclaration(
            options: ColumnOptions(name: nil, unique: false, indexed: false), wrapperType: Column<Int>.self,
            place: SourcePlace(file: "Elsewhere.swift", line: 1, column: 1)))
        let error = expectActiveObjectError {
            _ = try ColumnDeclarations.options(prototype: object, events: [stray] + events, discovery: discovery)
        }
        guard case let .invalidModel(model, reason)? = error else {
            Issue.record("expected invalidModel, got \(String(describing: error))")
            return
        }
        #expect(model == "Plain")
        #expect(reason.contains("created 1 @Column/@JSONColumn wrapper that ActiveObjects cannot see"), "\(reason)")
    }

    @Test func aTypeNamesAColumnWrapperOnlyAsAWholeName() {
        #expect(ColumnDeclarations.namesColumnWrapper("Boxed<Column<Int>>"))
        #expect(ColumnDeclarations.namesColumnWrapper("Column<String>"))
        #expect(ColumnDeclarations.namesColumnWrapper("Boxed<ActiveObjects.JSONColumn<Array<String>>>"))
        #expect(ColumnDeclarations.namesColumnWrapper("(Int, Column<Int>)"))
        #expect(!ColumnDeclarations.namesColumnWrapper("MyColumn<Int>"))
        #expect(!ColumnDeclarations.namesColumnWrapper("ColumnReference<Int>"))
        #expect(!ColumnDeclarations.namesColumnWrapper("() -> Int"))
    }

    @Test func instanceSizeCoversEveryStoredProperty() throws {
        let (object, _) = prototype(Plain.self)
        let discovery = try ColumnDiscovery(prototype: object)
        let size = ColumnDeclarations.instanceSize(of: Plain.self)
        #expect(discovery.fields.allSatisfy { $0.offset + $0.size <= size })
        #expect(size > ColumnDeclarations.instanceSize(of: ActiveObject.self))
    }
}
