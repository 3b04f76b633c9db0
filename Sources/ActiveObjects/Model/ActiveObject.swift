import Foundation
import Observation

/// The base class of every model: subclass it and declare `@Column` properties.
///
/// ```swift
/// final class Person: ActiveObject {
///     @Column var name: String = ""
///     @Column var age: Int = 0
/// }
///
/// ActiveObject.defaultDatabase = try Database(path: "people.sqlite")
/// try Person.createTable()
/// let joe = Person(); joe.name = "Joe"; joe.age = 30
/// try joe.save()                                   // INSERT; joe.id is now set
/// let adults = try Person.where(\.$age >= 18).all()
/// ```
///
/// The columns are discovered once per class (with `Mirror` on a prototype made with
/// `init()`) and the SQL built from them is cached. Override the class properties below to
/// map existing tables; override the hooks for validation and callbacks.
///
/// The class is declared `nonisolated`, and subclasses inherit that: a model declared in a
/// module whose default isolation is the main actor (`.defaultIsolation(MainActor.self)`, new
/// Xcode app targets) is a plain `final class Note: ActiveObject { … }`, overrides the hooks,
/// and is used from the main actor and from other tasks alike.
///
/// Objects are `Observable` (see <doc:SwiftUIAndObservation>): reading a `@Column` property or
/// `id` inside `withObservationTracking` (or a SwiftUI body) tracks that property alone, and a
/// different value assigned to it, or stored by `reload()` or `save()`, notifies. And they are
/// `Hashable` by class and saved key (see ``==(_:_:)``).
nonisolated open class ActiveObject: CustomStringConvertible, Identifiable {
    // The stored properties below are `@exclusivity(unchecked)`: the library reads and writes
    // them on every save and every fetched row, where a dynamic exclusivity check (with its
    // thread-local bookkeeping) cost more than the rest of the bookkeeping. They are plain
    // values, never accessed in place across calls, so no overlapping access can occur.

    /// The row's integer primary key (its rowid): nil until the object is inserted.
    ///
    /// `$id` names the key in queries like any `@Column`'s `$` reference:
    /// `Person.all.order(by: \.$id, .descending)`, `Person.where(\.$id > 10)`.
    ///
    /// Setting it by hand makes the object stand for the row with that id: `save()` then
    /// writes every column there (inserting the row, or replacing all its columns); the row
    /// it was loaded from is left as it is.
    @RowID public var id: Int64?

    /// The storage of ``id``.
    @exclusivity(unchecked) private var rowIDStorage: Int64?
    @exclusivity(unchecked) private var recordStateStorage = RecordState.new
    /// True from the planning of an async write of the object until it is applied (see
    /// `ActiveObject+Async.swift`). Declared beside `recordStateStorage`: it fits in the
    /// padding before the next field, so objects do not grow.
    @exclusivity(unchecked) final var asyncWriteInFlight = false
    /// True when the object was loaded from a result that lacked some of its columns
    /// (`fetch(sql:)` selecting part of the row): those properties hold defaults, not the
    /// row's values, so a write of the whole row is refused. Also fits in that padding.
    @exclusivity(unchecked) final var isPartiallyLoaded = false
    /// What an assignment to a `@Column` property must do besides storing the value, read by
    /// every setter (inlined into the model's module): 0 for a new, unobserved object (a plain
    /// store); otherwise the bits of ``AssignmentBookkeeping``. Also in that padding.
    @usableFromInline @exclusivity(unchecked) final var assignmentBookkeeping: UInt8 = 0
    @exclusivity(unchecked) private var persistedRowIDStorage: Int64?
    /// Set when the object was inserted inside a transaction: the fate of that transaction
    /// level. Until it is known, the insert may still be rolled back; once known, the object
    /// settles (see ``settleInsert()``).
    @exclusivity(unchecked) private var insertFate: TransactionFate?
    /// What only some objects need — relations loaded by `including`, the values before
    /// edits, an observation registrar — in one box allocated on first need: a fetched object
    /// nobody edits or observes carries one nil pointer for all of it.
    @exclusivity(unchecked) private var extras: ObjectExtras?

    /// The box of ``extras``, created on first use.
    private var extrasForWriting: ObjectExtras {
        if let extras { return extras }
        let created = ObjectExtras()
        extras = created
        return created
    }

    /// The values the properties assigned since the last load or save had before (change
    /// tracking, per object: nil until the first assignment).
    /// Setting it tells the observers of ``hasChanges`` (``ObservedProperty/changes``).
    final var edits: ObjectEdits? {
        get { extras?.edits }
        set {
            guard newValue != nil || extras != nil else { return }
            let box = extrasForWriting
            guard isObserved else { return box.edits = newValue }
            notifyingRegistrar(ofOffsets: [], id: false, changes: true) { box.edits = newValue }
        }
    }

    /// Remembers `value` as the value before of the property at `offset`, unless it has one.
    final func noteFirstAssignment(atOffset offset: Int, before value: @autoclosure () -> Any) {
        let box = extrasForWriting
        if box.edits == nil { box.edits = ObjectEdits() }
        box.edits!.noteFirstAssignment(atOffset: offset, before: value())
    }

    /// Sets the value before of the property at `offset` (async writes: the value written).
    final func setOriginal(_ value: Any, atOffset offset: Int) {
        var updated = edits ?? ObjectEdits()
        updated.setOriginal(value, atOffset: offset)
        edits = updated
    }

    /// The object's observation registrar, created by the first read inside an
    /// observation-tracking scope (nil for objects nobody observed).
    final var observationRegistrar: ObservationRegistrar? {
        get { extras?.registrar }
        set { if newValue != nil || extras != nil { extrasForWriting.registrar = newValue } }
    }

    /// The value of ``id`` (settled first: an insert rolled back since leaves nil).
    final var rowID: Int64? {
        get { settleInsert(); return rowIDStorage }
        set { settleInsert(); rowIDStorage = newValue }
    }

    /// Where the object stands with respect to its row; decides what `save()` does.
    final var recordState: RecordState {
        get { settleInsert(); return recordStateStorage }
        set { settleInsert(); recordStateStorage = newValue }
    }

    /// The rowid of the row the object was last loaded from or saved to (while `persisted`):
    /// an `id` that differs was set by hand.
    final var persistedRowID: Int64? {
        get { settleInsert(); return persistedRowIDStorage }
        set { settleInsert(); persistedRowIDStorage = newValue }
    }

    /// Marks the object as holding the row `rowID` in `state`, as a fetch leaves it: one
    /// settling of a pending insert, then three stores (a fetch's per-row bookkeeping).
    /// Also starts change tracking afresh: the values are what the row holds.
    @inline(__always)
    final func markLoaded(rowID: Int64?, state: RecordState) {
        settleInsert()
        rowIDStorage = rowID
        persistedRowIDStorage = rowID
        recordStateStorage = state
        if let extras, extras.edits != nil { edits = nil }
        assignmentBookkeeping |= AssignmentBookkeeping.tracksEdits
    }

    /// Sets the row id without notifying observers (the caller does, around a group of changes).
    final func storeRowID(_ rowID: Int64?) {
        settleInsert()
        rowIDStorage = rowID
    }

    /// Records that the object, new until now, was just inserted inside a transaction level
    /// whose fate is `fate`: if that level (or one enclosing it) rolls back, the object
    /// becomes new again the next time it is looked at. No log entry, no weak reference.
    final func insertedPending(_ fate: TransactionFate) {
        settleInsert()
        insertFate = fate
    }

    /// Applies the outcome of a pending insert's transaction, once it is known.
    @inline(__always)
    final func settleInsert() {
        guard let fate = insertFate else { return }
        switch fate.outcome {
        case .open, .released: return
        case .committed: insertFate = nil
        case .rolledBack: settleRolledBackInsert()
        }
    }

    /// The insert's transaction rolled back: the object is new again.
    @inline(never)
    private func settleRolledBackInsert() {
        insertFate = nil
        notifyingObservers(ofOffsets: [], id: rowIDStorage != nil) {
            rowIDStorage = nil
            recordStateStorage = .new
            persistedRowIDStorage = nil
        }
    }

    /// Related objects loaded by `including(_:)`, keyed by relation.
    final var preloadedRelations: [PreloadKey: Any]? {
        get { extras?.preloadedRelations }
        set { if newValue != nil || extras != nil { extrasForWriting.preloadedRelations = newValue } }
    }

    /// Creates an object with every property at its declared default. Subclasses whose
    /// properties all have defaults need no initializer.
    public required init() {
        // While a prototype's init() runs on this thread, the schema build keeps the objects
        // it creates (to tell their columns from the prototype's); one atomic load otherwise.
        PrototypeConstruction.noteCreated(self)
    }

    // MARK: Class-level configuration

    /// The table name: by default the class name in snake_case (`BlogPost` → `blog_post`).
    open class var tableName: String { ColumnNaming.snakeCased(String(describing: self)) }

    /// The primary key column. Default `"id"`.
    ///
    /// - Naming a column that is **not** a declared `@Column` maps the table's
    ///   `INTEGER PRIMARY KEY` to ``id`` under that name (`"contactid"`); `"rowid"` maps ``id`` to
    ///   the hidden rowid of a table without a declared key.
    /// - Naming a declared `@Column` of any storable type makes it a natural key
    ///   (`"CustomerID"`, a UUID…): `find(key:)` finds by it, `save()` updates by it, `upsert()`
    ///   conflicts on it, and ``id`` stays the rowid where the table has one.
    open class var primaryKey: String { "id" }

    /// Whether the model's table is synchronized between devices by a ``SyncEngine`` (§18).
    /// Default `false`.
    ///
    /// A synchronized model has a single primary key column of type `UUID` or `String`, so
    /// that devices can create rows without asking each other for numbers:
    ///
    /// ```swift
    /// final class Note: ActiveObject {
    ///     override class var isSynchronized: Bool { true }
    ///     override class var primaryKey: String { "uuid" }
    ///     @Column var uuid = UUID()
    ///     @Column var title = ""
    /// }
    /// ```
    ///
    /// ``createTable()`` of a synchronized model also installs the triggers that record every
    /// insert, update and delete of the table — by any connection or process — in the same
    /// transaction as the change. See <doc:Sync>.
    open class var isSynchronized: Bool { false }

    /// The columns of a composite primary key, in key order (`["OrderID", "ProductID"]`); each
    /// must be a declared `@Column`. Default `[primaryKey]`.
    open class var primaryKeys: [String] { [primaryKey] }

    /// Whether the table is `WITHOUT ROWID` (its key must be declared `@Column`s; ``id`` is
    /// always nil). Default false. A natural-key table another tool created `WITHOUT ROWID` is
    /// recognized without it; declare it so that `createTable()` creates one.
    open class var withoutRowID: Bool { false }

    /// Whether the model only reads: a database view, or a table the app must not write.
    /// Default `false`.
    ///
    /// ```swift
    /// final class OrderSubtotal: ActiveObject {
    ///     override class var tableName: String { "Order Subtotals" }   // a view
    ///     override class var isReadOnly: Bool { true }
    ///     @Column("OrderID") var orderId: Int64 = 0
    ///     @Column("Subtotal") var subtotal: Double = 0
    /// }
    /// let large = try OrderSubtotal.where(\.$subtotal > 5_000).order(by: \.$subtotal, .descending).all()
    /// ```
    /// Finders, queries, relations and live queries work as for any model. Every write —
    /// `save()`, `insert()`, `update()`, `upsert()`, `delete()`, `restore()`, `insertAll(_:)`,
    /// a query's `updateAll(_:)` and `delete()`, `delete(where:)`, `deleteAll()` — throws
    /// ``ActiveObjectError/misuse(_:)`` before anything runs (no hook, no SQL), and
    /// ``createTable()`` creates nothing. A view without a key column gives objects whose
    /// ``id`` is nil; name a column of the view in ``primaryKey`` to find rows by it. See
    /// <doc:FullTextSearchAndViews>.
    open class var isReadOnly: Bool { false }

    /// The columns a full-text index covers, by property or column name: `["title", "body"]`.
    /// Default `[]` (no index).
    ///
    /// ```swift
    /// final class Article: ActiveObject {
    ///     @Column var title = ""
    ///     @Column var body = ""
    ///     override class var searchableColumns: [String] { ["title", "body"] }
    /// }
    /// try Article.createTable()       // the table, and its FTS5 index kept in step by triggers
    /// let hits = try Article.search("sqlite swi").limit(20).all()
    /// ```
    /// ``createTable()`` creates an external-content FTS5 table named `<table>_search` over these
    /// columns (tokenizer `unicode61`, case and diacritics folded) and three triggers that keep
    /// it in step with every write to the table, by any connection or process; it indexes the
    /// rows already there. When the list changes, the next ``createTable()`` rebuilds the
    /// index; when it becomes empty, the index and its triggers are dropped. Query the index
    /// with ``ActiveRecord/search(_:)``.
    ///
    /// The table must have a rowid (not `WITHOUT ROWID`); a name that is not a column of the
    /// model, or the FTS5 reserved names `rank` and `rowid`, make the model
    /// ``ActiveObjectError/invalidModel(model:reason:)``.
    open class var searchableColumns: [String] { [] }

    /// How property names become column names. Default `.asIs`.
    open class var columnNaming: ColumnNaming { .asIs }

    /// The database this model lives in. Default ``defaultDatabase``; override to keep
    /// different models in different databases.
    open class var database: Database? { ActiveObject.defaultDatabase }

    /// The date strategy of this model's columns; nil (the default) uses the database's.
    /// Set it to map tables another library wrote (`.unixSeconds`, `.compactText`).
    open class var dateStrategy: DateStrategy? { nil }

    /// The class's ``database``. Inside the SQLite work of an async call (which runs on the
    /// library's own threads), a class whose `database` gives nil there — typically one read
    /// from a `@TaskLocal`, which those threads cannot see — uses the database the call runs on.
    static var resolvedDatabase: Database? { database ?? ThreadState.current.jobDatabase }

    /// The database models use unless they override ``database``; nil until you set it
    /// (models then throw ``ActiveObjectError/noDatabase(model:)``).
    public static var defaultDatabase: Database? {
        get { defaultDatabaseStorage.withLock { $0 } }
        set { defaultDatabaseStorage.withLock { $0 = newValue } }
    }

    // MARK: Validation and lifecycle hooks

    /// Checks the object before it is written; throw a ``ValidationError`` to refuse the
    /// write (`save()` then throws ``ActiveObjectError/validationFailed(_:)`` and writes nothing).
    open func validate() throws {}
    /// Called after validation, before the INSERT or UPDATE. Throwing cancels the write.
    open func willSave() throws {}
    /// Called after a successful INSERT or UPDATE.
    open func didSave() {}
    /// Called before the DELETE of ``delete()-8iq3o``. Throwing cancels the delete.
    open func willDelete() throws {}
    /// Called after a successful ``delete()-8iq3o``.
    open func didDelete() {}
    /// Called after a fetched or reloaded object's values were set from its row: compute
    /// derived state here (`fullName = "\(first) \(last)"`). Library writes into properties
    /// (fetches, `reload()`, rollbacks, relation keys) do not run property observers
    /// (`didSet`); this hook is the place to react to loaded values.
    open func didLoad() {}

    // MARK: Description

    /// `Person(id: 1, name: "Joe", age: 30)`.
    open var description: String {
        let type = Swift.type(of: self)
        guard let schema = try? ModelSchema.of(type) else { return "\(type)(id: \(id.map(String.init) ?? "nil"))" }
        observeReadOfWholeRow(schema: schema)
        var parts = ["id: " + (id.map(String.init) ?? "nil")]
        withUnsafeObjectPointer { base in
            for column in schema.columns {
                parts.append("\(column.propertyName): \(Self.describe(column.accessor.value(from: base)))")
            }
        }
        return "\(type)(" + parts.joined(separator: ", ") + ")"
    }

    private static func describe(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return "nil" }
            return describe(wrapped)
        }
        if let string = value as? String { return String(reflecting: string) }
        return String(describing: value)
    }

    /// Runs `body` with the address of this object's storage (for ``ColumnAccessor``).
    func withUnsafeObjectPointer<T>(_ body: (UnsafeMutableRawPointer) throws -> T) rethrows -> T {
        try withExtendedLifetime(self) {
            try body(UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque()))
        }
    }
}

private let defaultDatabaseStorage = LockedValue<Database?>(nil)

/// Adopted by ``ActiveObject`` so that class methods can return the concrete subclass:
/// `Person.findAll()` is `[Person]`, `Person.where(…)` is `Query<Person>`.
public protocol ActiveRecord: AnyObject {}

extension ActiveObject: ActiveRecord {}
