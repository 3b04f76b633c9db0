import Foundation

extension ModelSchema {
    /// How long a thread waits for another thread's build of the schema it needs before it
    /// gives up with ``ActiveObjectError/invalidModel(model:reason:)``.
    ///
    /// A build normally takes microseconds (a prototype's `init()` and reflection); a thread
    /// that waits this long is almost certainly waited for by the builder itself: the class's
    /// `init()` ran a query of the class on another thread and waits for it. Two seconds leave
    /// a slow `init()` (one that queries another model, say) ample room, and turn that
    /// deadlock into an error quickly. (A thread inside a write call or a `transaction` of any
    /// database does not wait at all: the builder's `init()` may be waiting for that writer; it
    /// builds the class itself, and the first result stored wins. A writer kept by a raw
    /// `BEGIN` between calls is not seen: such a thread may still wait out the bound.)
    static let buildWaitLimit: TimeInterval = 2

    /// The process-wide cache of schemas, and the coordination of their builds.
    ///
    /// Every build of a class is registered under the thread that runs it (``builders``); a
    /// thread that needs a class being built on another thread waits for that build rather
    /// than starting one of its own, so a class is built once. Two exceptions keep that wait
    /// from deadlocking: a thread that would wait for a thread already waiting (directly or
    /// through others) for it builds the class itself instead, unregistered (the first result
    /// stored wins, as before the builds were coordinated: two models whose inits use each
    /// other, first used on two threads at once); and a wait longer than ``buildWaitLimit``
    /// (a wait the library cannot see — the builder blocked in user code on this thread)
    /// throws instead.
    private final class Registry: @unchecked Sendable {
        // Safety: every stored property below is only touched while `condition` is locked.
        private let condition = NSCondition()
        private var schemas: [ObjectIdentifier: ModelSchema] = [:]
        private var failures: [ObjectIdentifier: ActiveObjectError] = [:]
        /// The registered builds in progress: class → the thread running it.
        private var builders: [ObjectIdentifier: ObjectIdentifier] = [:]
        /// The threads waiting for a build: thread → class.
        private var waiting: [ObjectIdentifier: ObjectIdentifier] = [:]

        /// What a thread that does not find the schema must do.
        enum Claim {
            /// Another thread finished the build meanwhile.
            case built(ModelSchema)
            /// Build it; `registered` when this thread is the class's registered builder
            /// (then it must call ``finish(_:with:registered:)`` in any case).
            case build(registered: Bool)
        }

        /// The cached schema of `key`, or nil; throws the cached failure.
        func cached(_ key: ObjectIdentifier) throws -> ModelSchema? {
            condition.lock()
            defer { condition.unlock() }
            if let schema = schemas[key] { return schema }
            if let failure = failures[key] { throw failure }
            return nil
        }

        /// Decides who builds `key` for `thread`: a cached result, this thread (registered
        /// or, when waiting would close a cycle of waits, not), or, while another thread
        /// builds it, that thread's result once it is stored.
        /// - Throws: the cached failure, or `invalidModel` after ``buildWaitLimit``.
        func claim(_ key: ObjectIdentifier, thread: ObjectIdentifier, holdsAWriter: Bool, model: String) throws -> Claim {
            condition.lock()
            defer { condition.unlock() }
            let deadline = Date(timeIntervalSinceNow: buildWaitLimit)
            while true {
                if let schema = schemas[key] { return .built(schema) }
                if let failure = failures[key] { throw failure }
                guard let builder = builders[key], builder != thread else {
                    builders[key] = thread
                    return .build(registered: true)
                }
                if waitWouldCloseACycle(on: builder, from: thread) { return .build(registered: false) }
                // A thread holding a database's writer (inside a transaction) does not wait:
                // the builder's init() may be waiting for that writer.
                if holdsAWriter { return .build(registered: false) }
                waiting[thread] = key
                let signalled = condition.wait(until: deadline)
                waiting[thread] = nil
                if !signalled, schemas[key] == nil, failures[key] == nil, builders[key] != nil {
                    throw ActiveObjectError.invalidModel(
                        model: model,
                        reason: "its schema is being built on another thread, and this thread waited "
                            + "\(Int(buildWaitLimit)) s for it: \(model)'s init() (or a class setting) probably "
                            + "waits for another thread that itself needs \(model)'s schema (a query of \(model) "
                            + "run on another thread and awaited inside the init()); run that query after the "
                            + "init(), or without waiting for it")
                }
            }
        }

        /// Whether `thread` waiting for `builder` would wait for itself: `builder` waits, through
        /// a chain of registered builds, for `thread`.
        private func waitWouldCloseACycle(on builder: ObjectIdentifier, from thread: ObjectIdentifier) -> Bool {
            var current = builder
            // Each step follows one waiting thread; more steps than waiting threads is a cycle
            // that does not involve `thread` (which cannot arise, but must not loop forever).
            for _ in 0...waiting.count {
                if current == thread { return true }
                guard let awaited = waiting[current], let next = builders[awaited] else { return false }
                current = next
            }
            return false
        }

        /// Stores the result of a build of `key` unless one is stored already (the first one
        /// stored wins), ends this thread's registration if `registered`, wakes the waiting
        /// threads, and returns the stored result.
        func finish(_ key: ObjectIdentifier, with result: Result<ModelSchema, ActiveObjectError>,
                    registered: Bool) throws -> ModelSchema {
            condition.lock()
            defer { condition.unlock() }
            if registered { builders[key] = nil }
            defer { condition.broadcast() }
            if let schema = schemas[key] { return schema }
            if let failure = failures[key] { throw failure }
            switch result {
            case .success(let schema):
                schemas[key] = schema
                ModelTables.register(schema.tableName, model: schema.modelName)
            case .failure(let error):
                failures[key] = error
            }
            return try result.get()
        }
    }

    private static let registry = Registry()

    /// The schema of a model class, built on first use. A class that cannot be mapped
    /// throws the same ``ActiveObjectError/invalidModel(model:reason:)`` on every use.
    ///
    /// A class used by its own schema build — its `init()` prints `self`, or initialises a
    /// property with a query of the class, or its `tableName` does — gets a (not cached)
    /// `invalidModel` for that inner use instead of an endless recursion; the build itself
    /// goes on.
    ///
    /// Builds are coordinated across threads (see `Registry`): a thread that needs a class
    /// whose build runs on another thread waits for it, at most ``buildWaitLimit``, then gets
    /// a (not cached) `invalidModel` — the case of an `init()` that waits for a query of its
    /// own class on another thread, which used to start a new build on each such thread
    /// without end.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)``.
    static func of(_ type: ActiveObject.Type) throws -> ModelSchema {
        let key = ObjectIdentifier(type)
        // Every save and query asks; most ask for the class asked for last on this thread.
        let thread = ThreadState.current
        if thread.recentSchemaKey == key, let schema = thread.recentSchema { return schema }
        let schema = try registry.cached(key) ?? built(type, key: key, thread: thread)
        thread.recentSchemaKey = key
        thread.recentSchema = schema
        return schema
    }

    /// The schema of `type`, not cached yet: built on this thread, or by the thread building
    /// it already. `thread` is this thread's state (its identity stands for the thread in the
    /// registry's bookkeeping of builds).
    private static func built(_ type: ActiveObject.Type, key: ObjectIdentifier, thread: ThreadState) throws -> ModelSchema {
        let name = String(describing: type)
        if PrototypeConstruction.isBuilding(type) {
            throw ActiveObjectError.invalidModel(
                model: name,
                reason: "\(name) was used while its own schema is being built (its init() or class settings "
                    + "use the class itself: print(self), description, or a query of \(name) in a property "
                    + "initializer); that use cannot see the schema yet")
        }
        let registered: Bool
        switch try registry.claim(key, thread: thread.identity, holdsAWriter: thread.holdsAnyWriter, model: name) {
        case .built(let schema): return schema
        case .build(let isRegistered): registered = isRegistered
        }
        // Built outside the lock: the prototype's init() is user code, which may itself use
        // other models (on this thread or others).
        let result: Result<ModelSchema, ActiveObjectError>
        do {
            result = .success(try PrototypeConstruction.withSchemaBuild(of: type) { try ModelSchema(type, build: $0) })
        } catch let error as ActiveObjectError {
            result = .failure(error)
        } catch {
            result = .failure(.invalidModel(model: name, reason: "\(error)"))
        }
        return try registry.finish(key, with: result, registered: registered)
    }
}
