import Foundation
import Testing
@testable import ActiveObjects

/// A user property wrapper (a struct) that can be composed around `@Column`.
@propertyWrapper
struct CheckLogged<Value> {
    var wrappedValue: Value
}

/// A user property wrapper (a class: the wrapped value lives outside the object).
@propertyWrapper
final class CheckBoxed<Value> {
    var wrappedValue: Value
    init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
}

/// A user property wrapper that keeps its wrapped value in an array.
@propertyWrapper
struct CheckArrayBoxed<Value> {
    var storage: [Value]
    var wrappedValue: Value {
        get { storage[0] }
        set { storage[0] = newValue }
    }
    init(wrappedValue: Value) { storage = [wrappedValue] }
}

/// A user property wrapper that keeps its wrapped value in a closure.
@propertyWrapper
struct CheckClosureBoxed<Value> {
    private var read: () -> Value
    var wrappedValue: Value {
        get { read() }
        set { read = { newValue } }
    }
    init(wrappedValue: Value) { read = { wrappedValue } }
}

/// A struct that declares a column wrapper of its own.
struct CheckColumnHolder {
    @Column var street: String = ""
}

/// Columns that reflection cannot see, and what must happen instead of a silently missing
/// column: a clear `invalidModel` (item 1 of the hardening issue). The case of a module built
/// without reflection metadata is proven for real by `.ci/check-reflection`; here it is
/// simulated by hiding columns from the discovery.
@Suite struct PrototypeColumnCheckTests {
    final class WrappedInStruct: ModelTestRecord {
        @Column var plain = ""
        @CheckLogged @Column var hidden = 0
    }

    final class WrappedInClass: ModelTestRecord {
        @Column var plain = ""
        @CheckBoxed @Column var hidden = 0
    }

    final class ColumnInsideStruct: ModelTestRecord {
        @Column var plain = ""
        var address = CheckColumnHolder()
    }

    final class ColumnInsideOptional: ModelTestRecord {
        @Column var plain = ""
        var maybe: Column<Int>? = Column(wrappedValue: 1)
    }

    final class WrappedInArrayWrapper: ModelTestRecord {
        @Column var plain = ""
        @CheckArrayBoxed @Column var hidden = 0
    }

    final class WrappedInClosureWrapper: ModelTestRecord {
        @Column var plain = ""
        @CheckClosureBoxed @Column var hidden = 0
    }

    /// Keeps a column wrapper only in a closure it stores under another name.
    final class ColumnInClosure: ModelTestRecord {
        @Column var plain = ""
        var makeLater: () -> Int = { let column = Column(wrappedValue: 1); return { column.wrappedValue } }()
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

    // MARK: Models that hide a column

    static let hidingModels: [(ActiveObject.Type, String)] = [
        (WrappedInStruct.self, "property hidden holds a @Column"),
        (WrappedInClass.self, "property hidden holds a @Column"),
        (ColumnInsideStruct.self, "property address holds a @Column"),
        (ColumnInsideOptional.self, "property maybe holds a @Column"),
        (CustomMirrored.self, "CustomReflectable"),
        (WrappedInArrayWrapper.self, "property hidden holds a @Column"),
        (WrappedInClosureWrapper.self, "property hidden holds a @Column"),
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
            #expect(expectActiveObjectError { try WrappedInStruct.createTable() }?.isInvalidModel == true)
            let object = WrappedInStruct()
            object.hidden = 5
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

    // MARK: The check itself, with a discovery that misses columns

    /// A prototype of `type` with the descriptors its initializers recorded.
    func prototype<T: ActiveObject>(_ type: T.Type) -> (ActiveObject, [ColumnDescriptor]) {
        let (prototype, recorded) = PrototypeConstruction.withSchemaBuild(of: type) { build in
            build.makePrototype { type.init() }
        }
        return (prototype, recorded)
    }

    @Test func theDescriptorsAreFoundInThePrototypeAtTheirColumnsOffsets() throws {
        let (object, recorded) = prototype(Plain.self)
        #expect(recorded.count == 3)
        let discovery = try ColumnDiscovery(prototype: object)
        let located = PrototypeColumnCheck.locate(recorded, in: object)
        #expect(located.map(\.offset) == discovery.columns.map(\.accessor.stateOffset))
        #expect(zip(located, discovery.columns).allSatisfy { $0.descriptor === $1.descriptor })
        // Creation order is declaration order here.
        #expect(zip(recorded, discovery.columns).allSatisfy { $0 === $1.descriptor })
        try PrototypeColumnCheck.verify(prototype: object, recorded: recorded, others: [], discovery: discovery)
    }

    @Test func aModelWhoseColumnsTheRuntimeDoesNotDescribeNamesTheBuildSetting() throws {
        let (object, recorded) = prototype(Plain.self)
        let discovery = try ColumnDiscovery(prototype: object)
        // What a module built with -disable-reflection-metadata gives: no fields of its own.
        let stripped = ColumnDiscovery(columns: [], fields: discovery.fields.filter { !$0.name.hasPrefix("_") })
        let error = expectActiveObjectError {
            try PrototypeColumnCheck.verify(prototype: object, recorded: recorded, others: [], discovery: stripped)
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
        let (object, recorded) = prototype(Plain.self)
        let discovery = try ColumnDiscovery(prototype: object)
        for dropped in discovery.columns.indices {
            var columns = discovery.columns
            columns.remove(at: dropped)
            // The field is still described: the column is hidden inside it.
            let partial = ColumnDiscovery(columns: columns, fields: discovery.fields)
            let error = expectActiveObjectError {
                try PrototypeColumnCheck.verify(prototype: object, recorded: recorded, others: [], discovery: partial)
            }
            #expect(error?.isInvalidModel == true)
            #expect("\(error.map { "\($0)" } ?? "")".contains(discovery.columns[dropped].propertyName))
        }
    }

    @Test func aDiscoveredColumnHoldingAnotherColumnsDeclarationIsRefused() throws {
        let (object, recorded) = prototype(Plain.self)
        let discovery = try ColumnDiscovery(prototype: object)
        let columns = discovery.columns
        let swapped = [DiscoveredColumn(propertyName: columns[0].propertyName, descriptor: columns[1].descriptor,
                                        accessor: columns[0].accessor),
                       DiscoveredColumn(propertyName: columns[1].propertyName, descriptor: columns[0].descriptor,
                                        accessor: columns[1].accessor),
                       columns[2]]
        let error = expectActiveObjectError {
            try PrototypeColumnCheck.verify(prototype: object, recorded: recorded, others: [],
                                            discovery: ColumnDiscovery(columns: swapped, fields: discovery.fields))
        }
        #expect(error?.isInvalidModel == true)
    }

    @Test func aDescriptorStoredNeitherInThePrototypeNorInAnotherCreatedObjectIsRefused() throws {
        try PrototypeConstruction.withSchemaBuild(of: Plain.self) { build in
            let (object, recorded) = build.makePrototype {
                _ = CheckChild()                  // dropped at once, kept by the build
                return Plain()
            }
            #expect(recorded.count == 4)
            #expect(build.others.count == 1 && build.others.first is CheckChild)
            let discovery = try ColumnDiscovery(prototype: object)
            // Found in the other object: that object's column.
            try PrototypeColumnCheck.verify(prototype: object, recorded: recorded, others: build.others,
                                            discovery: discovery)
            // Found nowhere: a column the library cannot see.
            let error = expectActiveObjectError {
                try PrototypeColumnCheck.verify(prototype: object, recorded: recorded, others: [], discovery: discovery)
            }
            guard case let .invalidModel(model, reason)? = error else {
                Issue.record("expected invalidModel, got \(String(describing: error))")
                return
            }
            #expect(model == "Plain")
            #expect(reason.contains("created 1 @Column/@JSONColumn wrapper that ActiveObjects cannot see"), "\(reason)")
            #expect(reason.contains("closure"))
        }
    }

    @Test func aTypeNamesAColumnWrapperOnlyAsAWholeName() {
        #expect(PrototypeColumnCheck.namesColumnWrapper("Boxed<Column<Int>>"))
        #expect(PrototypeColumnCheck.namesColumnWrapper("Column<String>"))
        #expect(PrototypeColumnCheck.namesColumnWrapper("Boxed<ActiveObjects.JSONColumn<Array<String>>>"))
        #expect(PrototypeColumnCheck.namesColumnWrapper("(Int, Column<Int>)"))
        #expect(!PrototypeColumnCheck.namesColumnWrapper("MyColumn<Int>"))
        #expect(!PrototypeColumnCheck.namesColumnWrapper("ColumnReference<Int>"))
        #expect(!PrototypeColumnCheck.namesColumnWrapper("() -> Int"))
    }

    @Test func instanceSizeCoversEveryStoredProperty() throws {
        let (object, _) = prototype(Plain.self)
        let discovery = try ColumnDiscovery(prototype: object)
        let size = PrototypeColumnCheck.instanceSize(of: Plain.self)
        #expect(discovery.fields.allSatisfy { $0.offset + $0.size <= size })
        #expect(size > PrototypeColumnCheck.instanceSize(of: ActiveObject.self))
    }
}
