import CActiveObjectsSupport

/// Tells the `@Column` initializers whether the object being created is the prototype a
/// class's schema is built from, and records the declarations they create for it.
///
/// Only the prototype needs a column's options (explicit name, constraints) and its slot, so
/// only the prototype's wrappers allocate a ``ColumnDescriptor`` to hold them; every other
/// object's wrappers hold just their value, which keeps objects small and fetches fast.
///
/// The state is per thread, as a stack of frames: a schema build pushes a frame for its
/// class, and records only while that class's `init()` runs (``SchemaBuild/makePrototype(_:)``).
/// A nested build (the prototype's `init()` uses another model for the first time) pushes its
/// own frame; objects the library creates meanwhile are made under a suspension frame
/// (``suspended(_:)``), so they get ordinary `.fresh` wrappers. Objects that user code creates
/// inside the prototype's `init()` still get descriptors; their base `ActiveObject.init()`
/// hands them to the frame (``noteCreated(_:)``), which keeps them alive until the build ends,
/// so that the schema build can tell their descriptors (found in their memory) from the
/// prototype's own, and refuse any descriptor found in neither.
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

    /// Records a descriptor a wrapper initializer creates for the prototype being built on
    /// this thread, and returns it. Called only when ``isActive`` is true.
    @usableFromInline
    static func recorded(_ descriptor: ColumnDescriptor) -> ColumnDescriptor {
        innermostFrame?.recorded.append(descriptor)
        return descriptor
    }

    /// The state of a prototype's wrapper: its declaration, recorded. Kept out of line so that
    /// the wrapper initializers, inlined into every model's `init()`, stay one atomic load and
    /// a branch in the common case.
    @usableFromInline @inline(never)
    static func prototypeState(_ options: ColumnOptions) -> ColumnState {
        .prototype(recorded(ColumnDescriptor(options: options)))
    }

    /// Called by `ActiveObject.init()` for every object created: while this thread records a
    /// prototype, the frame keeps `object` (see ``Frame/created``). When no prototype is being
    /// built anywhere — every fetch — it costs one atomic load.
    @inline(__always)
    static func noteCreated(_ object: ActiveObject) {
        if activeobjects_prototypes_in_progress_load() != 0 { keepIfRecording(object) }
    }

    /// Keeps `object` in this thread's innermost frame if that frame is recording a prototype
    /// (not for a suspension, nor outside the prototype's `init()`).
    @inline(never)
    private static func keepIfRecording(_ object: ActiveObject) {
        guard let frame = innermostFrame, frame.isRecording else { return }
        frame.created.append(object)
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

    /// Runs `body` with recording suspended on this thread: objects it creates get ordinary
    /// `.fresh` wrappers even while a prototype is being built. The library creates every
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
        /// The descriptors created while recording, in creation order.
        var recorded: [ColumnDescriptor] = []
        /// The objects whose `ActiveObject.init()` ran while recording, in creation order —
        /// the prototype until ``SchemaBuild/makePrototype(_:)`` returns, then only the others
        /// (created by user code in the prototype's `init()`). Kept strongly until the frame
        /// is released at the end of the build: their descriptors are recognised in their
        /// memory, which must stay theirs meanwhile.
        var created: [ActiveObject] = []
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

        /// Creates the prototype with `make` while recording, and returns it with the
        /// descriptors the wrapper initializers created meanwhile, in creation order (the
        /// prototype's own, and those of objects user code created inside its `init()`, which
        /// ``others`` keeps).
        func makePrototype(_ make: () -> ActiveObject) -> (prototype: ActiveObject, recorded: [ColumnDescriptor]) {
            frame.isRecording = true
            activeobjects_prototypes_in_progress_add(1)
            defer {
                frame.isRecording = false
                activeobjects_prototypes_in_progress_add(-1)
            }
            let prototype = make()
            let recorded = frame.recorded
            frame.recorded = []
            frame.created.removeAll { $0 === prototype }
            return (prototype, recorded)
        }

        /// The objects other than the prototype that were created on this thread while its
        /// `init()` ran (by user code: `var helper = Other()`, `print(Other())`), in creation
        /// order; alive until the build ends. Objects the library creates meanwhile (under
        /// ``PrototypeConstruction/suspended(_:)``) and nested builds' prototypes are not here.
        var others: [ActiveObject] { frame.created }
    }
}
