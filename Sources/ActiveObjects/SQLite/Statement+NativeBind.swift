import CSQLite

extension Statement {
    /// Binds the `type` at `pointer` (a model property's memory) to parameter `index`, straight
    /// into `sqlite3_bind_*`: no ``DatabaseValue``, no copy of a string. Returns false, having
    /// bound nothing, for the types that need a conversion (dates, decimals, NaN, custom
    /// ``ColumnValue``s): the caller then binds what ``ColumnValue`` encodes.
    ///
    /// The mirror of ``store(column:as:at:)``.
    /// - Throws: ``DatabaseError`` from SQLite; ``ActiveObjectError/databaseClosed``.
    @inline(__always)
    func bindNative(_ type: NativeType, at pointer: UnsafeRawPointer, to index: Int32) throws -> Bool {
        switch type {
        case .int: try bind(Int64(pointer.assumingMemoryBound(to: Int.self).pointee), at: index)
        case .int64: try bind(pointer.assumingMemoryBound(to: Int64.self).pointee, at: index)
        case .bool: try bind(Int64(pointer.assumingMemoryBound(to: Bool.self).pointee ? 1 : 0), at: index)
        case .string: try bind(textAt: pointer.assumingMemoryBound(to: String.self), at: index)
        case .double:
            let real = pointer.assumingMemoryBound(to: Double.self).pointee
            if real.isNaN { return false }
            try bind(real, at: index)
        case .optionalInt:
            guard let int = pointer.assumingMemoryBound(to: Int?.self).pointee else { try bindNull(at: index); return true }
            try bind(Int64(int), at: index)
        case .optionalInt64:
            guard let int = pointer.assumingMemoryBound(to: Int64?.self).pointee else { try bindNull(at: index); return true }
            try bind(int, at: index)
        case .optionalString:
            // The optional's payload is the string, at the same address.
            let text = pointer.assumingMemoryBound(to: String?.self)
            guard text.pointee != nil else { try bindNull(at: index); return true }
            try bind(textAt: UnsafeRawPointer(text).assumingMemoryBound(to: String.self), at: index)
        case .optionalDouble:
            guard let real = pointer.assumingMemoryBound(to: Double?.self).pointee else { try bindNull(at: index); return true }
            if real.isNaN { return false }
            try bind(real, at: index)
        default:
            return false
        }
        return true
    }
}
