import CActiveObjectsSupport

/// Tells the `@Column` initializers whether the object being created is the prototype a
/// class's schema is built from, and records what they declare for it.
///
/// Only the schema needs a column's options (explicit name, constraints): a wrapper holds its
/// value and nothing else, which keeps objects small and fetches fast. So while a prototype is
/// created, each wrapper initializer records its options, its wrapper type and the place of
/// its declaration (a ``ColumnDeclaration``), and the base `ActiveObject.init()` records each
/// object it completes (``noteCreated(_:)``); ``ColumnDeclarations`` then matches the
/// prototype's declarations to the properties reflection found.
///
/// The state is per thread, as a stack of frames: a schema build pushes a frame for its
/// class, and records only while that class's `init()` runs (``SchemaBuild/makePrototype(_:)``).
/// A nested build (the prototype's `init()` uses another model for the first time) pushes its
/// own frame; objects the library creates meanwhile are made under a suspension frame
/// (``suspended(_:)``), which records nothing. Objects that user code creates inside the
/// prototype's `init()` are recorded too (their declarations, then the object), and kept
/// alive until the build ends.
///
/// A process-wide atomic count of prototypes being created spares every other object creation
/// the thread-local lookup: when no prototype is being created anywhere, an `@Column`
/// initializer costs one atomic load.
@usableFromInline
enum PrototypeConstruction {
    /// True while this thread is running the `init()` of a prototype, outside any nested
    /// build or suspension. Inlined into every `@Column` initializer: the common answer (no
    /// prototype anywhere) costs one atomic load.
    @inlinable
    static var isActive: Bool {
        activeobjects_prototypes_in_progress_load() != 0 && isActiveOnThisThread
    }

    @usableFromInline
    static var isActiveOnThisThread: Bool { innermostFrame?.isRecording ?? false }

    /// Records a column a wrapper initializer declares while this thread creates a prototype.
    /// Called only when ``isActive`` is true; kept out of line so that the wrapper
    /// initializers, inlined into every model's `init()`, stay one atomic load and a branch in
    /// the common case.
    static func record(_ options: ColumnOptions, wrapper: Any.Type, at place: SourcePlace) {
        innermostFrame?.events.append(.declaration(ColumnDeclaration(options: options, wrapperType: wrapper, place: place)))
    }

    /// ``record(_:wrapper:at:)`` for the plain `@Column`/`@JSONColumn` declaration, taking the
    /// options as scalars: the options and the place are built here, out of line, so that the
    /// code the initializers inline into every model's `init()` stays a load, a branch and a
    /// call (building a ``ColumnOptions`` inline made it too large to be inlined: measured,
    /// ~200 instructions more per object created).
    @usableFromInline @inline(never)
    static func record(name: String?, unique: Bool, indexed: Bool, wrapper: Any.Type,
                       file: StaticString, line: UInt, column: UInt) {
        record(ColumnOptions(name: name, unique: unique, indexed: indexed), wrapper: wrapper,
               at: SourcePlace(file: file, line: line, column: column))
    }

    /// ``record(_:wrapper:at:)`` for the declarations with a former name or a role.
    @usableFromInline @inline(never)
    static func record(name: String?, unique: Bool, indexed: Bool, references: ActiveObject.Type?,
                       onDelete: ForeignKeyAction, renamedFrom: String?, role: ColumnRoleKind?, wrapper: Any.Type,
                       file: StaticString, line: UInt, column: UInt) {
        var options = ColumnOptions(name: name, unique: unique, indexed: indexed, references: references, onDelete: onDelete)
        options.renamedFrom = renamedFrom
        options.role = role
        record(options, wrapper: wrapper, at: SourcePlace(file: file, line: line, column: column))
    }

    /// Called by `ActiveObject.init()` for every object created: while this thread records a
    /// prototype, the frame records and keeps `object` (see ``Frame/events``). When no
    /// prototype is being built anywhere — every fetch — it costs one atomic load.
    @inline(__always)
    static func noteCreated(_ object: ActiveObject) {
        if activeobjects_prototypes_in_progress_load() != 0 { keepIfRecording(object) }
    }

    /// Records `object` in this thread's innermost frame if that frame is recording a prototype
    /// (not for a suspension, nor outside the prototype's `init()`).
    @inline(never)
    private static func keepIfRecording(_ object: ActiveObject) {
        guard let frame = innermostFrame, frame.isRecording else { return }
        frame.events.append(.object(object))
    }

    /// Whether this thread is building the schema of `type` right now (a re-entrant use of
    /// the class from its own `init()`, `tableName`, …).
    static func isBuilding(_ type: ActiveObject.Type) -> Bool {
        let identifier = ObjectIdentifier(type)
        var frame = innermostFrame
        while let current = frame {
            if current.building == identifier { return true }
            frame = current.previous
        }
        return false
    }

    /// Runs `body` (which builds the schema of `type`) with a build frame for `type` on this
    /// thread. The frame records nothing until `body` calls ``SchemaBuild/makePrototype(_:)``.
    static func withSchemaBuild<T>(of type: ActiveObject.Type, _ body: (SchemaBuild) throws -> T) rethrows -> T {
        let frame = Frame(building: ObjectIdentifier(type))
        return try push(frame) { try body(SchemaBuild(frame: frame)) }
    }

    /// Runs `body` with recording suspended on this thread: objects it creates are not recorded
    /// even while a prototype is being built. The library creates every
    /// object it loads through this (``ModelSchema/newObject()``). When no prototype is being
    /// built anywhere, it costs one atomic load.
    @inline(__always)
    static func suspended<T>(_ body: () throws -> T) rethrows -> T {
        if activeobjects_prototypes_in_progress_load() == 0 { return try body() }
        return try push(Frame(building: nil), body)
    }

    /// Pushes `frame` as this thread's innermost (``ThreadState/prototypeFrame``, unretained:
    /// the frame lives on this call's stack, and is popped before it returns) while `body` runs.
    private static func push<T>(_ frame: Frame, _ body: () throws -> T) rethrows -> T {
        let thread = ThreadState.current
        let previous = thread.prototypeFrame
        frame.previousPointer = previous
        thread.prototypeFrame = UnsafeRawPointer(Unmanaged.passUnretained(frame).toOpaque())
        defer { thread.prototypeFrame = previous }
        return try withExtendedLifetime(frame) { try body() }
    }

    private static var innermostFrame: Frame? {
        ThreadState.current.prototypeFrame.map { Unmanaged<Frame>.fromOpaque($0).takeUnretainedValue() }
    }

    /// One entry of a thread's stack: a schema build, or a suspension (`building == nil`).
    final class Frame {
        /// The class whose schema is being built; nil for a suspension.
        let building: ObjectIdentifier?
        /// True while the prototype's `init()` runs.
        var isRecording = false
        /// What was recorded while recording, in order: the columns the wrapper initializers
        /// declared, and the objects whose `ActiveObject.init()` completed (the prototype, and
        /// those user code created in its `init()`, kept alive until the build ends).
        var events: [PrototypeEvent] = []
        /// The enclosing frame (unretained: it outlives this one).
        var previousPointer: UnsafeRawPointer?

        init(building: ObjectIdentifier?) { self.building = building }

        var previous: Frame? {
            previousPointer.map { Unmanaged<Frame>.fromOpaque($0).takeUnretainedValue() }
        }
    }

    /// The handle a schema build uses to create its prototype.
    struct SchemaBuild {
        fileprivate let frame: Frame

        /// Creates the prototype with `make` while recording, and returns it with what was
        /// recorded meanwhile, in order: the columns declared and the objects completed (the
        /// prototype's, and those of objects user code created inside its `init()`). Objects
        /// the library creates meanwhile (under ``PrototypeConstruction/suspended(_:)``) and
        /// nested builds' prototypes are not recorded.
        func makePrototype(_ make: () -> ActiveObject) -> (prototype: ActiveObject, events: [PrototypeEvent]) {
            frame.isRecording = true
            activeobjects_prototypes_in_progress_add(1)
            defer {
                frame.isRecording = false
                activeobjects_prototypes_in_progress_add(-1)
            }
            let prototype = make()
            return (prototype, frame.events)
        }
    }
}

/// A column declaration a wrapper initializer recorded while a prototype was created.
struct ColumnDeclaration {
    let options: ColumnOptions
    /// `Column<String>`, `JSONColumn<[Int]>`…
    let wrapperType: Any.Type
    let place: SourcePlace
}

/// What a prototype's creation recorded, in order.
enum PrototypeEvent {
    /// A wrapper initializer ran.
    case declaration(ColumnDeclaration)
    /// An object's `ActiveObject.init()` ran: every wrapper of the object was initialized
    /// before (each class's before its superclass's).
    case object(ActiveObject)
}
