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

    /// The query's result as it changes, keeping its objects: each element is a
    /// ``LiveChange`` with the objects in order, the rows that entered and left, and the
    /// objects updated in place. A row stays the same object while it stays in the result.
    /// See ``LiveChanges``.
    ///
    /// ```swift
    /// for try await change in Note.all.order(by: \.$title).changes() {
    ///     table.apply(change.difference)
    ///     for note in change.updated { table.reload(note) }
    /// }
    /// ```
    /// The sequence throws ``ActiveObjectError/noDatabase(model:)`` at once when the model has
    /// no database, and the query's errors (an unknown column…) with its first read.
    public func changes() -> LiveChanges<Model> {
        LiveChanges(query: self)
    }

    /// The query's objects on the main actor, updated in place after every commit that
    /// changes them: see ``LiveResults``.
    ///
    /// ```swift
    /// @MainActor final class NotesScreen {
    ///     let notes = Note.where(\.$archived == false).order(by: \.$updatedAt, .descending).liveResults()
    /// }
    /// ```
    /// Errors do not throw: they stop the live result and appear in ``LiveResults/error``.
    @MainActor
    public func liveResults() -> LiveResults<Model> {
        LiveResults(query: self)
    }
}
