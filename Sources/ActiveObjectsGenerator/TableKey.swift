import Foundation

/// How a table identifies its rows, which decides the key overrides of its model.
///
/// | schema | model |
/// |---|---|
/// | `id INTEGER PRIMARY KEY` (a rowid alias) | `ActiveObject.id`; `primaryKey` when not named `id` |
/// | one other key column (`code TEXT PRIMARY KEY`, `id INT PRIMARY KEY`, `INTEGER PRIMARY KEY DESC`) | a `@Column` for it and `primaryKey` naming it |
/// | `user_id INTEGER PRIMARY KEY REFERENCES users` (a rowid alias that is a foreign key) | the same: a `@Column`, so that relations can use it |
/// | `PRIMARY KEY (a, b)` | a `@Column` for each and `primaryKeys` naming them |
/// | no primary key | `primaryKey` = `"rowid"`: `id` is the hidden rowid |
/// | a column named `rowid` that is not the rowid alias | no model (see ``TableInfo/key``) |
///
/// `WITHOUT ROWID` tables (always with a declared key) add `withoutRowID`. A view has no key
/// (``none``): its model is read-only, and its objects' `id` is nil.
enum TableKey: Equatable {
    /// `id INTEGER PRIMARY KEY`: the column is the rowid, mapped to `ActiveObject.id`.
    case rowidAlias(String)
    /// One key column that is not the rowid, or a rowid alias that is a foreign key: declared as
    /// a `@Column` like the others.
    case natural(String)
    /// Several key columns, in key order.
    case composite([String])
    /// No declared primary key: the rowid identifies rows.
    case rowid
    /// A view: nothing identifies its rows (none is inferred), `id` is nil.
    case none

    /// The key columns that the model declares as `@Column`s.
    var declaredColumns: [String] {
        switch self {
        case .rowidAlias, .rowid, .none: return []
        case .natural(let column): return [column]
        case .composite(let columns): return columns
        }
    }
}

extension TableInfo {
    /// The key of the table's model, or why the table gets no model.
    var key: Result<TableKey, SkipReason> {
        switch kind {
        case "view":
            if let unreadable {
                return .failure(SkipReason("a view SQLite cannot read (\(unreadable))"))
            }
            if let hiding = columns.first(where: { $0.name.lowercased() == "rowid" }) {
                // The library takes a result column of that name for the rowid.
                return .failure(SkipReason("a view whose column \(hiding.name) the library would read as a rowid (read it with `db.rows`)"))
            }
            return .success(.none)
        case "virtual":
            let module = virtualModule.map { " (USING \($0))" } ?? ""
            return .failure(SkipReason("a virtual table\(module): its module stores the rows (query it with `db.rows`)"))
        case "shadow":
            let owner = shadowOwner.map { " \($0)" } ?? ""
            return .failure(SkipReason("an internal table of the virtual table\(owner)"))
        default:
            break
        }
        let keys = columns.filter { $0.primaryKeyPosition > 0 }.sorted { $0.primaryKeyPosition < $1.primaryKeyPosition }
        // Only a column declared exactly INTEGER aliases the rowid
        // (https://www.sqlite.org/lang_createtable.html#rowid); `INTEGER PRIMARY KEY DESC` does
        // not either, and shows up as an automatic "pk" index. WITHOUT ROWID tables have none.
        let alias = keys.count == 1 && !withoutRowID && keys[0].declaredType.uppercased() == "INTEGER"
            && !indexes.contains(where: { $0.origin == "pk" }) ? keys[0] : nil
        // The library names a table's rowid `rowid` in its SQL (the `id` of natural and
        // composite keys, the numbering of `insertAll`) and takes a result column of that name
        // for the rowid (`fetch(sql:)`, even without a rowid): a column so named (but not a
        // `rowid INTEGER PRIMARY KEY` alias, which is the rowid) would be read instead.
        // `_rowid_` and `oid` columns are harmless: the library never uses those names.
        if let hiding = columns.first(where: { $0.name.lowercased() == "rowid" }), hiding != alias {
            if keys.isEmpty {
                // `primaryKey = "rowid"` would name that column instead of the rowid.
                return .failure(SkipReason("no primary key, and its column \(hiding.name) hides the rowid that would identify rows"))
            }
            if withoutRowID {
                return .failure(SkipReason("a WITHOUT ROWID table, yet `fetch(sql:)` would read its column \(hiding.name) as the rowid"))
            }
            return .failure(SkipReason("its column \(hiding.name) hides the table's rowid, which the library reads by that name"
                                       + (alias == nil ? " (as the `id` of a natural or composite key: no row would load)"
                                                       : " (to number the rows of `insertAll`)")))
        }
        if keys.count > 1 { return .success(.composite(keys.map(\.name))) }
        guard let key = keys.first else { return .success(.rowid) }
        if let alias {
            // A key that is also a foreign key (a one-to-one table, `profiles(user_id INTEGER
            // PRIMARY KEY REFERENCES users)`) is declared as a @Column, like a natural key, so
            // that relations can use it (`belongsTo`/`hasOne` need a declared column, not
            // `id`); it stays the rowid, and `id` holds the same number.
            if foreignKeys.contains(where: { $0.columns.count == 1 && $0.columns[0].lowercased() == alias.name.lowercased() }) {
                return .success(.natural(alias.name))
            }
            return .success(.rowidAlias(alias.name))
        }
        return .success(.natural(key.name))
    }

    /// The module of a virtual table (`fts5` in `CREATE VIRTUAL TABLE docs USING fts5(…)`).
    var virtualModule: String? {
        guard let using = sql.range(of: "USING", options: .caseInsensitive) else { return nil }
        let module = sql[using.upperBound...].drop(while: { $0 == " " || $0 == "\n" || $0 == "\t" })
            .prefix(while: { SwiftNames.isIdentifierCharacter($0) })
        return module.isEmpty ? nil : String(module)
    }
}
