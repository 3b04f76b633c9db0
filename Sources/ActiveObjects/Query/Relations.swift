/// Loads related objects for a list of parents in one query (see `Query.including`).
struct Preloader<Model: ActiveObject> {
    let load: ([Model], Database) throws -> Void
}

/// Identifies a preloaded relation on an object.
struct PreloadKey: Hashable {
    let relation: String
}

extension Query {
    func preload(_ objects: [Model], database: Database) throws {
        guard !objects.isEmpty else { return }
        for preloader in preloaders { try preloader.load(objects, database) }
    }
}
