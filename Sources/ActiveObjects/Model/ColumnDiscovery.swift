@_spi(Reflection) import Swift

/// A `@Column` property found in a class: its property name, accessor, and the class of the
/// hierarchy that declares it.
struct DiscoveredColumn {
    let propertyName: String
    let accessor: ColumnAccessor
    /// The wrapper's type (`Column<String>`).
    let wrapperType: any ColumnWrapper.Type
    /// The declaring class's depth below `ActiveObject` (1 for a direct subclass).
    let level: Int
}

/// A stored property of a class as the Swift runtime describes it (for diagnostics).
struct StoredField {
    /// The field's name (`_name` for a wrapped property `name`).
    let name: String
    let offset: Int
    let size: Int

    /// The property as the user wrote it: `name` for the wrapper's storage `_name`.
    var propertyName: String { Self.propertyName(of: name) }

    /// `name` for a wrapper's storage `_name`; other names unchanged.
    static func propertyName(of field: String) -> String {
        field.hasPrefix("_") ? String(field.dropFirst()) : field
    }

    func contains(_ byteOffset: Int) -> Bool { byteOffset >= offset && byteOffset < offset + size }
}

/// Finds the column wrappers of a prototype through reflection.
///
/// Two views of the stored properties must agree before the library trusts them: `Mirror`
/// (the supported, safe view) and the runtime's field layout with offsets (the standard
/// library's `_forEachField`), which is what the accessors use. If the runtime cannot give
/// the offsets, or they disagree with Mirror, the class is refused with a clear
/// `invalidModel` error instead of guessing.
///
/// Both views read the same reflection metadata, so neither can notice when that metadata is
/// missing altogether; ``ColumnDeclarations`` compares the result with what the wrapper
/// initializers themselves recorded.
struct ColumnDiscovery {
    /// The column wrappers, superclass columns first, each class's in declaration order.
    let columns: [DiscoveredColumn]
    /// Every stored property the runtime describes, columns or not.
    let fields: [StoredField]

    /// A discovery made of the given parts (for tests of what uses it).
    init(columns: [DiscoveredColumn], fields: [StoredField]) {
        self.columns = columns
        self.fields = fields
    }

    /// Discovers the columns of `prototype`'s class.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` when the class cannot be
    ///   reflected reliably.
    init(prototype: ActiveObject) throws {
        let type = Swift.type(of: prototype)
        let modelName = String(describing: type)

        // 0. A custom mirror replaces the stored properties by whatever the model chose to
        //    show: the columns could not be found through it.
        if prototype is any CustomReflectable {
            throw ActiveObjectError.invalidModel(
                model: modelName,
                reason: "it conforms to CustomReflectable, whose custom mirror hides the @Column properties "
                    + "from ActiveObjects; remove the conformance (CustomStringConvertible or "
                    + "CustomDebugStringConvertible can describe the object instead)")
        }

        // 1. Mirror: walk from the root class down so that inherited columns come first, in
        //    declaration order.
        var mirrors: [Mirror] = []
        var current: Mirror? = Mirror(reflecting: prototype)
        while let mirror = current {
            mirrors.append(mirror)
            current = mirror.superclassMirror
        }
        var mirrored: [(label: String, wrapper: any ColumnWrapper, level: Int)] = []
        // `ActiveObject`'s own mirror is the last: level 0.
        for (level, mirror) in mirrors.reversed().enumerated() {
            for child in mirror.children {
                // The exact type, not a cast: `as?` would also unwrap an optional wrapper.
                if Swift.type(of: child.value) is any ColumnWrapper.Type,
                   let wrapper = child.value as? any ColumnWrapper, let label = child.label {
                    mirrored.append((label, wrapper, level))
                }
            }
        }

        // 2. The runtime's field layout, with offsets. `_EachFieldOptions.classType` is a
        //    `static var` (not concurrency-safe to read); build the same option from its
        //    documented raw value.
        var wrapperFields: [(label: String, offset: Int, type: any ColumnWrapper.Type)] = []
        var allFields: [StoredField] = []
        let walked = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 0)) { name, offset, fieldType, _ in
            let label = String(cString: name)
            allFields.append(StoredField(name: label, offset: offset, size: Self.size(of: fieldType)))
            if let wrapperType = fieldType as? any ColumnWrapper.Type {
                wrapperFields.append((label, offset, wrapperType))
            }
            return true
        }
        guard walked else {
            throw ActiveObjectError.invalidModel(
                model: modelName, reason: "the Swift runtime did not describe its stored properties")
        }
        fields = allFields

        // 3. Both views must agree: same properties, same order, same wrapper types.
        guard wrapperFields.count == mirrored.count,
              zip(wrapperFields, mirrored).allSatisfy({ $0.label == $1.label && $0.type == Swift.type(of: $1.wrapper) })
        else {
            throw ActiveObjectError.invalidModel(
                model: modelName,
                reason: "its field layout (\(wrapperFields.map(\.label))) disagrees with Mirror (\(mirrored.map(\.label)))")
        }

        // Properties are told apart by where they lie in the object (change tracking,
        // observation): a value that occupies no memory has no place of its own.
        if let empty = wrapperFields.first(where: { Self.size(of: $0.type) == 0 }) {
            throw ActiveObjectError.invalidModel(
                model: modelName,
                reason: "the value of property \(StoredField.propertyName(of: empty.label)) occupies no memory (a single-case enum or an empty struct?), so it has no place of its own in the object: give its type a stored value")
        }

        // 4. Reading through each offset must give what Mirror gives.
        let context = ValueContext()
        columns = try prototype.withUnsafeObjectPointer { base in
            try zip(wrapperFields, mirrored).map { field, mirror in
                guard let accessor = field.type.makeAccessor(offset: field.offset) else {
                    throw ActiveObjectError.invalidModel(
                        model: modelName, reason: "the Swift runtime did not describe the layout of \(field.label)")
                }
                let viaOffset = try? accessor.encode(from: base, context: context)
                let viaMirror = try? mirror.wrapper.encodedValue(in: context)
                guard viaOffset.map({ v in viaMirror.map { DatabaseValue.sameStoredValue(v, $0) } ?? false })
                        ?? (viaMirror == nil) else {
                    throw ActiveObjectError.invalidModel(
                        model: modelName, reason: "property \(field.label) cannot be read reliably")
                }
                return DiscoveredColumn(propertyName: StoredField.propertyName(of: field.label), accessor: accessor,
                                        wrapperType: field.type, level: mirror.level)
            }
        }
    }

    /// The size of a value of a type known only at run time.
    private static func size(of type: Any.Type) -> Int {
        func size<T>(_: T.Type) -> Int { MemoryLayout<T>.size }
        return _openExistential(type, do: size)
    }
}
