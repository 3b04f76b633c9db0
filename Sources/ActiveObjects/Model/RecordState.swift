/// Where an object stands with respect to its row. `save()` is one decision on it:
///
/// | state | `save()` |
/// |---|---|
/// | `new` | INSERT (with `id` when set by hand: insert, or replace the whole row with that id) |
/// | `persisted` | UPDATE of the changed columns (none: no SQL); an `id` changed by hand writes the whole row at that id |
/// | `deleted` | INSERT of the whole row again, with the same `id` or key (a constraint error if another row holds it now) |
/// | `keyless` | refused: the object was loaded without its primary key, so no row can be named |
///
/// Orthogonal to the state, ``ActiveObject/isPartiallyLoaded`` (loaded without some columns)
/// refuses every write of the whole row.
enum RecordState: UInt8 {
    /// Not in the database: never saved, or its INSERT was rolled back.
    case new
    /// Holds the row it was loaded from or saved to (`persistedRowID`).
    case persisted
    /// Its row was deleted through ``ActiveObject/delete()``.
    case deleted
    /// Loaded from a result without the primary key column (`fetch(sql:)`, aggregates).
    case keyless
}
