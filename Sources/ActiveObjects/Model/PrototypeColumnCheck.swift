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
/// 3. recorded descriptors stored elsewhere belong to other objects (created by user code in
///    the prototype's `init()`) and are ignored — unless the prototype reaches them through a
///    stored property that is not an object, which means a `@Column` boxed by another wrapper.
///
/// Any disagreement throws ``ActiveObjectError/invalidModel(model:reason:)``.
enum PrototypeColumnCheck {
    /// Verifies `discovery` against `recorded` for `prototype`.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` naming the cause: missing
    ///   reflection metadata (and the build setting), or the property that hides a column.
    static func verify(prototype: ActiveObject, recorded: [ColumnDescriptor], discovery: ColumnDiscovery) throws {
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
        //    or a column boxed by a class-based wrapper of the prototype.
        let inside = Set(stored.map { ObjectIdentifier($0.descriptor) })
        let outside = Set(recorded.map(ObjectIdentifier.init)).subtracting(inside)
        guard !outside.isEmpty else { return }
        var mirror: Mirror? = Mirror(reflecting: prototype)
        while let current = mirror {
            for child in current.children where !(Swift.type(of: child.value) is any ColumnWrapper.Type) {
                if reaches(child.value, anyOf: outside, depth: 4) {
                    throw nestedColumn(in: StoredField.propertyName(of: child.label ?? "?"), model: modelName)
                }
            }
            mirror = current.superclassMirror
        }
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
                + "wrapper, a struct, an optional…), where ActiveObjects cannot map it; declare @Column or "
                + "@JSONColumn directly on a stored property of the model")
    }

    /// The recorded descriptors stored inside `object`'s instance memory, by the offset of the
    /// ``ColumnState`` that holds each, in memory order.
    static func locate(_ recorded: [ColumnDescriptor], in object: ActiveObject) -> [(offset: Int, descriptor: ColumnDescriptor)] {
        guard !recorded.isEmpty else { return [] }
        let stateSize = MemoryLayout<ColumnState>.size
        let alignment = MemoryLayout<ColumnState>.alignment
        // The exact bytes a wrapper holds in its state for each recorded descriptor.
        var patterns: [[UInt8]: ColumnDescriptor] = [:]
        for descriptor in recorded {
            let state = ColumnState.prototype(descriptor)
            patterns[withUnsafeBytes(of: state) { Array($0) }] = descriptor
        }
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
        case .struct?, .class?, .enum?, .optional?, .tuple?:
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
