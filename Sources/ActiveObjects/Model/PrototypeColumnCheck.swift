#if canImport(ObjectiveC)
import ObjectiveC
#endif

/// Checks the columns reflection found against the declarations the wrapper initializers
/// recorded while the prototype was created.
///
/// Reflection (``ColumnDiscovery``) can miss columns without noticing: a module compiled
/// without reflection metadata describes no stored properties at all, a `@Column` wrapped in
/// another property wrapper or stored inside a struct is not a column-typed field. The
/// initializers, though, run whatever the metadata says, and each recorded the
/// ``ColumnDescriptor`` it created (``PrototypeConstruction``). This check finds those
/// descriptors by identity:
///
/// 1. inside the prototype's own memory — the bit pattern a wrapper's `.prototype(descriptor)`
///    state has, compared word by word over the instance, which needs no metadata at all;
/// 2. then every descriptor stored in the prototype must be exactly one discovered column's,
///    at that column's own offset (same count, same identity, same position), and every
///    discovered column must hold a distinct one;
/// 3. a recorded descriptor stored elsewhere must be found, the same way, in the memory of
///    one of the other objects created during the prototype's `init()` (by user code:
///    `var helper = Other()`, `print(Other())`; the build keeps them alive,
///    ``PrototypeConstruction/SchemaBuild/others``): those columns are theirs. Any other one
///    is a `@Column` the library cannot see — boxed by another wrapper (a class, an array, a
///    closure…), or kept in a collection or a closure — and refused, naming the property that
///    holds it when reflection can tell.
///
/// Any disagreement throws ``ActiveObjectError/invalidModel(model:reason:)``.
enum PrototypeColumnCheck {
    /// Verifies `discovery` against `recorded` for `prototype`; `others` are the objects other
    /// than the prototype created while it was (``PrototypeConstruction/SchemaBuild/others``),
    /// alive.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` naming the cause: missing
    ///   reflection metadata (and the build setting), or the property that hides a column.
    static func verify(prototype: ActiveObject, recorded: [ColumnDescriptor], others: [ActiveObject],
                       discovery: ColumnDiscovery) throws {
        let modelName = String(describing: Swift.type(of: prototype))
        let stored = locate(recorded, in: prototype)
        var storedAt: [Int: ColumnDescriptor] = [:]
        for (offset, descriptor) in stored { storedAt[offset] = descriptor }

        // 2a. Each discovered column holds, at its own offset, a recorded descriptor of its own.
        var seen = Set<ObjectIdentifier>()
        for column in discovery.columns {
            guard let found = storedAt[column.accessor.stateOffset], found === column.descriptor else {
                throw ActiveObjectError.invalidModel(
                    model: modelName,
                    reason: "property \(column.propertyName) does not hold the declaration its @Column initializer "
                        + "created for the prototype")
            }
            guard seen.insert(ObjectIdentifier(found)).inserted else {
                throw ActiveObjectError.invalidModel(
                    model: modelName,
                    reason: "property \(column.propertyName) holds a copy of another property's column wrapper")
            }
        }

        // 2b. Every column wrapper stored in the prototype is a discovered column.
        let discoveredOffsets = Set(discovery.columns.map(\.accessor.stateOffset))
        let hidden = stored.filter { !discoveredOffsets.contains($0.offset) }
        if let first = hidden.first {
            if let field = discovery.fields.first(where: { $0.contains(first.offset) }) {
                throw nestedColumn(in: field.propertyName, model: modelName)
            }
            throw missingReflectionMetadata(model: modelName, created: stored.count, described: discovery.columns.count)
        }

        // 3. Descriptors recorded for the prototype but stored outside it: another object's,
        //    or a column hidden by the prototype (boxed by a wrapper, kept in a closure…).
        let inside = Set(stored.map { ObjectIdentifier($0.descriptor) })
        let outsideDescriptors = recorded.filter { !inside.contains(ObjectIdentifier($0)) }
        guard !outsideDescriptors.isEmpty else { return }
        let outside = Set(outsideDescriptors.map(ObjectIdentifier.init))
        // 3a. The prototype reaches one through a stored property that is not an object.
        if let property = propertyReaching(outside, in: prototype) {
            throw nestedColumn(in: property, model: modelName)
        }
        // 3b. The others must be stored in the objects created meanwhile.
        var unaccounted = outside
        let patterns = statePatterns(outsideDescriptors)
        for object in others where !unaccounted.isEmpty {
            for (_, descriptor) in locate(patterns, in: object) {
                unaccounted.remove(ObjectIdentifier(descriptor))
            }
        }
        guard !unaccounted.isEmpty else { return }
        if let property = propertyNamingAColumnType(in: prototype) {
            throw nestedColumn(in: property, model: modelName)
        }
        throw unseenColumns(count: unaccounted.count, model: modelName)
    }

    /// The property of `prototype` (other than its column wrappers) through which reflection
    /// reaches a column wrapper holding one of `descriptors`, if any.
    private static func propertyReaching(_ descriptors: Set<ObjectIdentifier>, in prototype: ActiveObject) -> String? {
        firstProperty(of: prototype) { reaches($0, anyOf: descriptors, depth: 4) }
    }

    /// The first property of `prototype` that is not itself a column wrapper but whose type
    /// names one (`_hidden: Boxed<Column<Int>>`): where a wrapper that keeps its value out of
    /// reflection's reach (in a closure) hides a column. Only used to name the culprit in an
    /// error already certain.
    private static func propertyNamingAColumnType(in prototype: ActiveObject) -> String? {
        firstProperty(of: prototype) { namesColumnWrapper(String(describing: Swift.type(of: $0))) }
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

    /// The recorded descriptors stored inside `object`'s instance memory, by the offset of the
    /// ``ColumnState`` that holds each, in memory order.
    static func locate(_ recorded: [ColumnDescriptor], in object: ActiveObject) -> [(offset: Int, descriptor: ColumnDescriptor)] {
        locate(statePatterns(recorded), in: object)
    }

    /// The exact bytes a wrapper holds in its state for each of `descriptors`.
    static func statePatterns(_ descriptors: [ColumnDescriptor]) -> [[UInt8]: ColumnDescriptor] {
        var patterns: [[UInt8]: ColumnDescriptor] = [:]
        for descriptor in descriptors {
            let state = ColumnState.prototype(descriptor)
            patterns[withUnsafeBytes(of: state) { Array($0) }] = descriptor
        }
        return patterns
    }

    /// The descriptors of `patterns` (``statePatterns(_:)``) stored inside `object`'s
    /// instance memory, by offset, in memory order.
    static func locate(_ patterns: [[UInt8]: ColumnDescriptor], in object: ActiveObject)
        -> [(offset: Int, descriptor: ColumnDescriptor)] {
        guard !patterns.isEmpty else { return [] }
        let stateSize = MemoryLayout<ColumnState>.size
        let alignment = MemoryLayout<ColumnState>.alignment
        let size = instanceSize(of: Swift.type(of: object))
        // Skip the object header (metadata pointer and reference counts).
        let start = 2 * MemoryLayout<UnsafeRawPointer>.size
        guard size >= start + stateSize else { return [] }
        return object.withUnsafeObjectPointer { base in
            let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(base), count: size)
            var found: [(offset: Int, descriptor: ColumnDescriptor)] = []
            for offset in stride(from: start, through: size - stateSize, by: alignment) {
                if let descriptor = patterns[Array(bytes[offset ..< offset + stateSize])] {
                    found.append((offset, descriptor))
                }
            }
            return found
        }
    }

    /// Whether `value` (not an ``ActiveObject``) holds a column wrapper whose descriptor is one
    /// of `descriptors`, within `depth` levels of stored properties.
    private static func reaches(_ value: Any, anyOf descriptors: Set<ObjectIdentifier>, depth: Int) -> Bool {
        if value is ActiveObject { return false }
        if let wrapper = value as? any ColumnWrapper {
            return wrapper.descriptor.map { descriptors.contains(ObjectIdentifier($0)) } ?? false
        }
        guard depth > 0 else { return false }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct?, .class?, .enum?, .optional?, .tuple?, .collection?, .dictionary?, .set?:
            return mirror.children.prefix(64).contains { reaches($0.value, anyOf: descriptors, depth: depth - 1) }
        default:
            return false
        }
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
