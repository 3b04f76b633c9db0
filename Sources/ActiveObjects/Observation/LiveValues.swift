/// The results of a read, following every commit: an `AsyncSequence` whose first element is
/// the current result, then a fresh result after each committed transaction that changed a
/// table the read uses. Made by ``Database/values(_:)`` and `Query.values()`.
///
/// ```swift
/// for try await people in Person.where(\.$active == true).order(by: \.$name).values() {
///     screen.people = people          // fresh objects each time
/// }
/// ```
///
/// - **What is observed**: the tables SQLite reports the fetch reads (also through views,
///   subqueries, `count(*)`, and the relations loaded with `including`), learned anew at
///   every fetch.
/// - **What counts**: every commit of this ``Database`` that inserted, updated or deleted rows
///   in one of those tables (models, `execute`, transactions); commits of other connections
///   and processes to the same file (the result is fetched again and emitted if it changed).
///   Nothing is emitted for rolled-back transactions or savepoints (raw `ROLLBACK TO` too), nor
///   for commits to other tables.
/// - **Schema changes**: a statement SQLite re-compiles after a schema change (by anyone)
///   learns its tables again (a trigger added, a view redefined); a commit that changes the
///   schema makes every observation fetch again, emitting only if its result changed.
/// - **Coalescing**: one fetch at a time, on a reader connection (never blocking the writer);
///   a burst of commits may skip intermediate states, but the last element always equals a
///   fresh fetch after the last commit. A slow consumer only ever has the newest result
///   waiting.
/// - **Lifecycle**: each `for try await` loop is its own observation. Leaving the loop or
///   cancelling its task ends it and releases everything it held; closing the database ends
///   it with ``ActiveObjectError/databaseClosed``; an error while fetching ends it with that
///   error — except `busy` and `locked` (a lock held past the busy timeout), after which the
///   fetch is tried again, with a growing delay, until it succeeds.
public struct LiveValues<Element>: AsyncSequence, Sendable {
    /// The database, or the error that prevents observing (a model without database).
    private let database: Result<Database, ActiveObjectError>
    private let fetch: @Sendable () throws -> sending Element

    init(database: Result<Database, ActiveObjectError>, fetch: @escaping @Sendable () throws -> sending Element) {
        self.database = database
        self.fetch = fetch
    }

    /// Iterates one observation. The iterator is meant for one consumer.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: AsyncThrowingStream<Element, Error>.Iterator

        init(_ base: AsyncThrowingStream<Element, Error>.Iterator) { self.base = base }

        /// The next result, waiting for a commit if needed; nil once the observation ended.
        /// - Throws: ``ActiveObjectError/databaseClosed`` when the database closes; the error
        ///   of a failed fetch.
        public mutating func next() async throws -> Element? {
            try await base.next()
        }

        /// The next result, on the caller's actor (what `for try await` uses).
        /// - Throws: as ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Element? {
            try await base.next(isolation: actor)
        }
    }

    /// Starts an observation: registers it and fetches the current result.
    public func makeAsyncIterator() -> AsyncIterator {
        let (stream, continuation) = AsyncThrowingStream<Element, Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        switch database {
        case .success(let database):
            ValuesObservation(database: database, fetch: fetch, continuation: continuation).start()
        case .failure(let error):
            continuation.finish(throwing: error)
        }
        return AsyncIterator(stream.makeAsyncIterator())
    }
}

extension Database {
    /// Observes any reads: the first element is their current result, then a fresh result
    /// after each commit that changed a table they read (see ``LiveValues``).
    ///
    /// ```swift
    /// for try await (count, newest) in db.values({
    ///     (try Person.countAll(), try Person.all.order(by: \.$id, .descending).first())
    /// }) {
    ///     badge.count = count
    /// }
    /// ```
    /// `fetch` runs on a reader thread, in one snapshot, each time the result may have
    /// changed; it must only read (a write inside is ``ActiveObjectError/misuse(_:)``, which
    /// ends the sequence).
    public func values<T>(_ fetch: @escaping @Sendable () throws -> sending T) -> LiveValues<T> {
        LiveValues(database: .success(self), fetch: fetch)
    }
}
