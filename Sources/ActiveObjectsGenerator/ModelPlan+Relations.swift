extension ModelPlan {
    /// `var group: BelongsTo<Group>` on children; `var people: HasMany<Person>` on parents, or
    /// `var profile: HasOne<Profile>` when the foreign key is unique in the child (a `UNIQUE`
    /// column, or the child's whole primary key).
    mutating func addRelations() {
        for childIndex in classes.indices {
            let child = classes[childIndex]
            for property in child.properties {
                guard let parentName = property.references,
                      let parentIndex = classes.firstIndex(where: { $0.className == parentName }) else { continue }
                // belongsTo: `groupId` → `group`, `customerCode` → `customer` (the parent's key is
                // `code`); else the parent's name (`parent` in a tree).
                var base = childIndex == parentIndex ? "parent" : (SwiftNames.lowerCamel(classes[parentIndex].relationStem) ?? "parent")
                let parentKey = classes[parentIndex].key.declaredColumns.first.flatMap(SwiftNames.lowerCamel).map(Self.capitalized)
                for suffix in ["Id", "ID"] + (parentKey.map { [$0] } ?? [])
                where property.name.hasSuffix(suffix) && property.name.count > suffix.count {
                    base = String(property.name.dropLast(suffix.count))
                    break
                }
                // `code REFERENCES codes`: the column has the name already.
                if SwiftNames.unusableNames.contains(base) || child.properties.contains(where: { $0.name == base }) { base += "Record" }
                let belongsName = Self.unique(base, taken: classes[childIndex].takenNames)
                classes[childIndex].relations.append(
                    RelationPlan(name: belongsName, kind: .belongsTo, relatedClass: parentName, keyProperty: property.name))

                // hasMany: the children's plural; `messagesAsSender` when one child refers twice.
                let isOne = property.unique || child.key == .natural(property.column)
                var name = SwiftNames.lowerCamel(child.relationStem) ?? "child"
                if !isOne { name = Inflection.plural(name) }
                if SwiftNames.unusableNames.contains(name) { name += "Record" }  // a table `self`
                let references = child.properties.filter { $0.references == parentName }.count
                if childIndex == parentIndex && references == 1 {
                    name = isOne ? "child" : "children"  // a tree: parent / children
                } else if references > 1 {
                    name += "As" + Self.capitalized(belongsName)
                }
                classes[parentIndex].relations.append(RelationPlan(
                    name: Self.unique(name, taken: classes[parentIndex].takenNames), kind: isOne ? .hasOne : .hasMany,
                    relatedClass: child.className, keyProperty: property.name))
            }
        }
    }

    /// `HasManyThrough` on both sides of every join table: `playlist.tracks` and
    /// `track.playlists` through `playlist_track(playlist_id, track_id)`; `order.products` and
    /// `product.orders` through `"Order Details"(OrderID, ProductID, UnitPrice, Quantity)`.
    /// The join model itself is generated too, with its own columns. See ``joinShape(_:)`` for
    /// which tables are join tables.
    mutating func addManyToManyRelations() {
        struct Path { var owner: String, target: String, join: ClassPlan, near: PropertyPlan, far: PropertyPlan }
        var paths: [Path] = []
        for join in classes where Self.joinShape(join) != nil {
            let keys = join.properties.filter { $0.references != nil }
            let (first, second) = (keys[0], keys[1])
            paths.append(Path(owner: first.references!, target: second.references!, join: join, near: first, far: second))
            paths.append(Path(owner: second.references!, target: first.references!, join: join, near: second, far: first))
        }
        for path in paths {
            guard let ownerIndex = classes.firstIndex(where: { $0.className == path.owner }) else { continue }
            // `tracks`; `productsAsRelated` when a class reaches the same target twice (a
            // self-join, two join tables); `tracksViaFavorite` when `tracks` is taken.
            let stem = classes.first(where: { $0.className == path.target })?.relationStem ?? path.target
            var name = Inflection.plural(SwiftNames.lowerCamel(stem) ?? "related")
            let taken = classes[ownerIndex].takenNames
            if paths.filter({ $0.owner == path.owner && $0.target == path.target }).count > 1 {
                let near = path.join.relations.first(where: { $0.kind == .belongsTo && $0.keyProperty == path.near.name })
                name += "As" + Self.capitalized(near?.name ?? path.near.name)
            } else if taken.contains(name) {
                name += "Via" + path.join.className
            }
            classes[ownerIndex].relations.append(RelationPlan(
                name: Self.unique(name, taken: taken), kind: .hasManyThrough, relatedClass: path.target,
                keyProperty: path.near.name, joinClass: path.join.className, targetKeyProperty: path.far.name))
        }
        // The join model's doc comment names both sides.
        for index in classes.indices {
            guard let shape = Self.joinShape(classes[index]) else { continue }
            let join = classes[index]
            let sides = join.properties.filter { $0.references != nil }.compactMap { property -> String? in
                guard let owner = classes.first(where: { $0.className == property.references }),
                      let relation = owner.relations.first(where: {
                          $0.kind == .hasManyThrough && $0.joinClass == join.className && $0.keyProperty == property.name
                      }) else { return nil }
                return "`\(owner.className).\(relation.name)`"
            }
            switch shape {
            case .pure:
                classes[index].about.append("A join table (many-to-many): see \(sides.joined(separator: " and ")).")
            case .withColumns(let columns):
                let list = columns.map { "`\($0)`" }.joined(separator: ", ")
                classes[index].about.append("A join table (many-to-many) with columns of its own (\(list)): see "
                                            + "\(sides.joined(separator: " and ")). Their `add(_:)` inserts a row "
                                            + "whose own columns keep their initial values (to set them, save the row "
                                            + "through this model).")
            }
        }
    }

    /// What kind of join table a model maps, if any.
    enum JoinShape: Equatable {
        /// Two foreign keys and nothing `add(_:)` could not fill in.
        case pure
        /// Two foreign keys that identify the row, and columns of its own (property names).
        case withColumns([String])
    }

    /// Whether the class maps a join table, and which kind.
    ///
    /// A join table has exactly two single-column foreign keys with relations (to parents with
    /// a single-column key; to two tables, or to one table twice: a self-join), and
    /// - nothing else but columns the library fills in on its own — those with a role:
    ///   `created_at DEFAULT CURRENT_TIMESTAMP`, `updated_at`, `lock_version` — with the two
    ///   columns as its key, or a rowid alias (`id INTEGER PRIMARY KEY`), or the rowid (a
    ///   pure join table: Chinook's `PlaylistTrack`); or
    /// - any other columns (a quantity, a position, a `last_update`), when the pair of foreign
    ///   keys identifies the row: it is the primary key (Sakila's `film_actor`, Northwind's
    ///   `"Order Details"`), or the table has a UNIQUE constraint or index over exactly the two.
    ///   Without that, a row is an entity of its own that happens to point at two tables
    ///   (Chinook's `InvoiceLine`: a track may be bought twice on one invoice), and the
    ///   relations stay `BelongsTo`/`HasMany`.
    ///
    /// A view is never a join table (no foreign keys).
    static func joinShape(_ model: ClassPlan) -> JoinShape? {
        guard !model.isReadOnly else { return nil }
        let keys = model.properties.filter { $0.references != nil }
        guard keys.count == 2 else { return nil }
        let others = model.properties.filter { $0.references == nil }
        if case .natural = model.key {
            // A one-column key among the two is a one-to-one table, not a join.
            if keys.contains(where: \.isKey) { return nil }
        } else if others.allSatisfy({ $0.role != nil }) {
            return .pure
        }
        let pair = Set(keys.map { $0.column.lowercased() })
        guard model.uniqueColumnSets.contains(pair) else { return nil }
        return .withColumns(others.map(\.name))
    }

    /// `sender` → `Sender`.
    static func capitalized(_ name: String) -> String {
        name.prefix(1).uppercased() + name.dropFirst()
    }
}
