#if canImport(ObjectiveC)
import ObjectiveC
#endif

/// Gives each column reflection found the options its declaration wrote (`@Column("name",
/// unique: true)`), from what the wrapper initializers recorded while the prototype was
/// created (``PrototypeConstruction``), and checks that reflection missed none.
///
/// A wrapper holds only its value, so the options cannot be read from the prototype; they are
/// matched to properties by what the Swift language guarantees about initialization:
///
/// 1. **Which object.** An object's `ActiveObject.init()` runs after every wrapper of the object
///    was initialized, and an object created inside another's initializer is completed before
///    it. So, reading the recording in order, the declarations an object claims when it
///    completes are the last ones not claimed yet, as many as it has column properties. Objects
///    that user code creates in the prototype's `init()` (`var helper = Other()`) claim theirs.
/// 2. **Which class.** Each class initializes its own stored properties before calling its
///    superclass's `init()`: the prototype's declarations come most-derived class first.
/// 3. **Which property.** Within a class, each declaration carries the place the compiler gives
///    it (`#fileID`, `#line`, `#column` of the property's declaration, even when an `init()`
///    assigns it): ordered by place, they follow the declaration order reflection reports.
///
/// Each match must pair the same wrapper type. A declaration left unclaimed is a column the
/// library cannot see (reflection metadata stripped from the module, or a wrapper kept in an
/// optional, a collection or a closure), and the class is refused: any disagreement throws
/// ``ActiveObjectError/invalidModel(model:reason:)``.
enum ColumnDeclarations {
    /// The options of each column of `discovery`, in its order.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` naming the cause: missing
    ///   reflection metadata (and the build setting), the property that hides a column, or a
    ///   declaration that does not match its property.
    static func options(prototype: ActiveObject, events: [PrototypeEvent], discovery: ColumnDiscovery) throws -> [ColumnOptions] {
        let modelName = String(describing: Swift.type(of: prototype))
        // 1. Each completed object claims its declarations.
        var pending: [ColumnDeclaration] = []
        var own: [ColumnDeclaration]?
        for event in events {
            switch event {
            case .declaration(let declaration):
                pending.append(declaration)
            case .object(let object):
                let isPrototype = object === prototype
                let count = isPrototype ? discovery.columns.count
                    : ((try? ColumnDiscovery(prototype: object))?.columns.count ?? 0)
                let claimed = Array(pending.suffix(count))
                pending.removeLast(claimed.count)
                if isPrototype { own = claimed }
            }
        }
        if !pending.isEmpty {
            throw unseen(pending.count, prototype: prototype, discovery: discovery, model: modelName)
        }
        guard let own, own.count == discovery.columns.count else {
            throw ActiveObjectError.invalidModel(
                model: modelName,
                reason: "its init() initialized fewer @Column/@JSONColumn properties than reflection describes")
        }

        // 2–3. Per class, most-derived first; within a class, by place of declaration.
        var options = [ColumnOptions?](repeating: nil, count: discovery.columns.count)
        var remaining = own[...]
        let levels = Dictionary(grouping: discovery.columns.indices) { discovery.columns[$0].level }
        for level in levels.keys.sorted(by: >) {
            let indices = levels[level]!
            let declarations = Array(remaining.prefix(indices.count))
            remaining = remaining.dropFirst(indices.count)
            let places = declarations.map(\.place)
            let ordered = Set(places).count == places.count && Set(places.map(\.file)).count == 1
                ? declarations.sorted { ($0.place.line, $0.place.column) < ($1.place.line, $1.place.column) }
                : declarations
            for (index, declaration) in zip(indices, ordered) {
                let column = discovery.columns[index]
                guard declaration.wrapperType == column.wrapperType else {
                    throw ActiveObjectError.invalidModel(
                        model: modelName,
                        reason: "property \(column.propertyName) is a \(column.wrapperType), but the declaration matched "
                            + "to it made a \(declaration.wrapperType) (\(declaration.place.file):\(declaration.place.line))")
                }
                options[index] = declaration.options
            }
        }
        return options.map { $0! }
    }

    /// The error for `count` declarations no object claimed.
    private static func unseen(_ count: Int, prototype: ActiveObject, discovery: ColumnDiscovery,
                               model: String) -> ActiveObjectError {
        // Stored properties the runtime does not describe (bytes of the instance no described
        // field covers, beyond alignment padding): a module without reflection metadata.
        if hasUndescribedStorage(Swift.type(of: prototype), fields: discovery.fields) {
            return missingReflectionMetadata(model: model, created: count + discovery.columns.count,
                                             described: discovery.columns.count)
        }
        if let property = firstProperty(of: prototype, where: { reachesAColumn($0, depth: 4) }) {
            return nestedColumn(in: property, model: model)
        }
        if let property = firstProperty(of: prototype, where: { namesColumnWrapper(String(describing: Swift.type(of: $0))) }) {
            return nestedColumn(in: property, model: model)
        }
        return unseenColumns(count: count, model: model)
    }

    /// Whether some bytes of an instance of `type`, past the object header, belong to no field
    /// the runtime describes (a gap wider than any alignment padding).
    static func hasUndescribedStorage(_ type: AnyClass, fields: [StoredField]) -> Bool {
        let header = 2 * MemoryLayout<UnsafeRawPointer>.size
        var covered = header
        for field in fields.sorted(by: { $0.offset < $1.offset }) {
            if field.offset - covered >= MemoryLayout<UnsafeRawPointer>.size { return true }
            covered = max(covered, field.offset + field.size)
        }
        return instanceSize(of: type) - covered >= MemoryLayout<UnsafeRawPointer>.size
    }

    /// The name of the first stored property of `prototype`, its superclasses' included, that
    /// is not a column wrapper and whose value satisfies `test`.
    private static func firstProperty(of prototype: ActiveObject, where test: (Any) -> Bool) -> String? {
        var mirror: Mirror? = Mirror(reflecting: prototype)
        while let current = mirror {
            for child in current.children where !(Swift.type(of: child.value) is any ColumnWrapper.Type) {
                if test(child.value) { return StoredField.propertyName(of: child.label ?? "?") }
            }
            mirror = current.superclassMirror
        }
        return nil
    }

    /// Whether `value` (not an ``ActiveObject``) holds a column wrapper within `depth` levels of
    /// stored properties.
    private static func reachesAColumn(_ value: Any, depth: Int) -> Bool {
        if value is ActiveObject { return false }
        if Swift.type(of: value) is any ColumnWrapper.Type { return true }
        guard depth > 0 else { return false }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct?, .class?, .enum?, .optional?, .tuple?, .collection?, .dictionary?, .set?:
            return mirror.children.prefix(64).contains { reachesAColumn($0.value, depth: depth - 1) }
        default:
            return false
        }
    }

    /// Whether a type's name mentions `Column<…>` or `JSONColumn<…>` as a whole name
    /// (`Boxed<Column<Int>>`, `ActiveObjects.Column<Int>`; not `MyColumn<Int>`).
    static func namesColumnWrapper(_ typeName: String) -> Bool {
        for wrapper in ["Column<", "JSONColumn<"] {
            var searched = typeName[...]
            while let range = searched.range(of: wrapper) {
                if range.lowerBound == typeName.startIndex { return true }
                let before = typeName[typeName.index(before: range.lowerBound)]
                if !(before.isLetter || before.isNumber || before == "_") { return true }
                searched = typeName[range.upperBound...]
            }
        }
        return false
    }

    /// The message for a module built without reflection metadata.
    static func missingReflectionMetadata(model: String, created: Int, described: Int) -> ActiveObjectError {
        .invalidModel(
            model: model,
            reason: "its init() created \(created) @Column/@JSONColumn properties but the Swift runtime describes "
                + "only \(described): the module that declares it (or one of its model superclasses) was compiled "
                + "without reflection metadata (the compiler flag -disable-reflection-metadata, or Xcode's build "
                + "setting \"Reflection Metadata Level\" = None). ActiveObjects finds columns through reflection "
                + "metadata: build that module with the default level (All)")
    }

    /// The message for a `@Column` that is not itself a stored property of the model.
    static func nestedColumn(in property: String, model: String) -> ActiveObjectError {
        .invalidModel(
            model: model,
            reason: "property \(property) holds a @Column or @JSONColumn inside another type (another property "
                + "wrapper, a struct, an optional, an array, a closure…), where ActiveObjects cannot map it; "
                + "declare @Column or @JSONColumn directly on a stored property of the model")
    }

    /// The message for column wrappers created during the prototype's `init()` that are
    /// neither in the model nor in another model object, and no property can be named.
    static func unseenColumns(count: Int, model: String) -> ActiveObjectError {
        .invalidModel(
            model: model,
            reason: "its init() created \(count) @Column/@JSONColumn \(count == 1 ? "wrapper" : "wrappers") that "
                + "ActiveObjects cannot see: neither a stored property of \(model) nor a column of another model "
                + "object created by the init(), but nested in another property wrapper, or kept in a collection "
                + "or a closure; declare @Column or @JSONColumn directly on a stored property of the model")
    }

    /// The size in bytes of an instance of `type`, from its class metadata (present even
    /// without reflection metadata: allocation needs it).
    static func instanceSize(of type: AnyClass) -> Int {
        #if canImport(ObjectiveC)
        return class_getInstanceSize(type)
        #else
        return Int(swiftClassInstanceExtents(type).positive)
        #endif
    }
}

#if !canImport(ObjectiveC)
// The runtime function behind the standard library's `_class_getInstancePositiveExtentSize`
// on platforms without the Objective-C runtime (declared the same way there).
@_silgen_name("_swift_getSwiftClassInstanceExtents")
private func swiftClassInstanceExtents(_ type: AnyClass) -> (negative: UInt, positive: UInt)
#endif
