extension ModelSchema {
    private struct Registry {
        var schemas: [ObjectIdentifier: ModelSchema] = [:]
        var failures: [ObjectIdentifier: ActiveObjectError] = [:]
    }
    private static let registry = LockedValue(Registry())

    /// The schema of a model class, built on first use. A class that cannot be mapped
    /// throws the same ``ActiveObjectError/invalidModel(model:reason:)`` on every use.
    ///
    /// A class used by its own schema build — its `init()` prints `self`, or initialises a
    /// property with a query of the class, or its `tableName` does — gets a (not cached)
    /// `invalidModel` for that inner use instead of an endless recursion; the build itself
    /// goes on.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)``.
    static func of(_ type: ActiveObject.Type) throws -> ModelSchema {
        let key = ObjectIdentifier(type)
        // Every save and query asks; most ask for the class asked for last on this thread.
        let recent = RecentSchema.onThisThread
        if recent.key == key, let schema = recent.schema { return schema }
        if let schema = registry.withLock({ $0.schemas[key] }) {
            recent.key = key
            recent.schema = schema
            return schema
        }
        if let failure = registry.withLock({ $0.failures[key] }) { throw failure }
        if PrototypeConstruction.isBuilding(type) {
            let name = String(describing: type)
            throw ActiveObjectError.invalidModel(
                model: name,
                reason: "\(name) was used while its own schema is being built (its init() or class settings "
                    + "use the class itself: print(self), description, or a query of \(name) in a property "
                    + "initializer); that use cannot see the schema yet")
        }
        // Built outside the lock: the prototype's init() is user code, which may itself use
        // other models. Two threads may build the same class at once; the first one stored wins.
        let built: Result<ModelSchema, ActiveObjectError>
        do {
            built = .success(try PrototypeConstruction.withSchemaBuild(of: type) { try ModelSchema(type, build: $0) })
        } catch let error as ActiveObjectError {
            built = .failure(error)
        } catch {
            built = .failure(.invalidModel(model: String(describing: type), reason: "\(error)"))
        }
        return try registry.withLock { registry in
            if let schema = registry.schemas[key] { return schema }
            if let failure = registry.failures[key] { throw failure }
            switch built {
            case .success(let schema): registry.schemas[key] = schema
            case .failure(let error): registry.failures[key] = error
            }
            return try built.get()
        }
    }
}

/// The schema a thread used last, so that repeated saves and queries of one class skip the
/// registry's lock. One per thread (a thread-local box), never shared.
final class RecentSchema {
    var key: ObjectIdentifier?
    var schema: ModelSchema?

    private static let boxes = ThreadLocal<RecentSchema>()

    /// This thread's box, created on first use.
    static var onThisThread: RecentSchema { boxes.value { RecentSchema() } }
}
