extension Query {
    /// The query's objects, following every commit: the first element is the current result,
    /// then a fresh result (new objects) after each committed transaction that changed the
    /// model's table — or a table of a relation loaded with `including`. See ``LiveValues``.
    ///
    /// ```swift
    /// for try await people in Person.where(\.$active == true).order(by: \.$name).values() {
    ///     screen.people = people
    /// }
    /// ```
    /// The sequence throws ``ActiveObjectError/noDatabase(model:)`` at once when the model has
    /// no database, and the query's errors (an unknown column…) with its first fetch.
    public func values() -> LiveValues<[Model]> {
        let query = self
        let database: Result<Database, ActiveObjectError> = Model.resolvedDatabase.map { .success($0) }
            ?? .failure(.noDatabase(model: String(describing: Model.self)))
        return LiveValues(database: database) { try query.all() }
    }
}
