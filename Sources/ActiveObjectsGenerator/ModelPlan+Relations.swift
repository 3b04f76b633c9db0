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

    /// `HasManyThrough` on both sides of every pure join table: `playlist.tracks` and
    /// `track.playlists` through `playlist_track(playlist_id, track_id)`.
    ///
    /// A join table is pure when its columns are exactly two foreign keys with relations (to
    /// parents with a single-column key), and its key is those two columns, its rowid alias
    /// (`id INTEGER PRIMARY KEY`) or its rowid. Columns the library fills in on its own — those
    /// with a role: `created_at DEFAULT CURRENT_TIMESTAMP`, `updated_at`, `lock_version` — may
    /// come beside them (`add` stamps the row). Any other column (a quantity, a date) makes it
    /// a model of its own: `add` could not fill it in.
    mutating func addManyToManyRelations() {
        struct Path { var owner: String, target: String, join: ClassPlan, near: PropertyPlan, far: PropertyPlan }
        var paths: [Path] = []
        for join in classes where Self.isPureJoin(join) {
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
        for index in classes.indices where Self.isPureJoin(classes[index]) {
            let join = classes[index]
            let sides = join.properties.filter { $0.references != nil }.compactMap { property -> String? in
                guard let owner = classes.first(where: { $0.className == property.references }),
                      let relation = owner.relations.first(where: {
                          $0.kind == .hasManyThrough && $0.joinClass == join.className && $0.keyProperty == property.name
                      }) else { return nil }
                return "`\(owner.className).\(relation.name)`"
            }
            classes[index].about.append("A join table (many-to-many): see \(sides.joined(separator: " and ")).")
        }
    }

    /// Whether the class is a pure join table (see ``addManyToManyRelations()``).
    static func isPureJoin(_ model: ClassPlan) -> Bool {
        let others = model.properties.filter { $0.references == nil }
        guard model.properties.count - others.count == 2, others.allSatisfy({ $0.role != nil }) else { return false }
        if case .natural = model.key { return false }
        return true
    }

    /// `sender` → `Sender`.
    static func capitalized(_ name: String) -> String {
        name.prefix(1).uppercased() + name.dropFirst()
    }
}
