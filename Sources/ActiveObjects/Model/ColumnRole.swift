import Foundation

/// A job the library does for a column on every write: stamping the moment a row was created
/// or last changed, marking it deleted instead of deleting it, counting its versions.
///
/// ```swift
/// final class Post: ActiveObject {
///     @Column var title = ""
///     @Column(role: .createdAt) var createdAt: Date? = nil
///     @Column(role: .updatedAt) var updatedAt: Date? = nil
///     @Column(role: .deletedAt) var deletedAt: Date? = nil     // soft delete
///     @Column(role: .lockVersion) var lockVersion: Int = 0     // optimistic locking
/// }
/// ```
///
/// A role exists only for the property types it can serve, so a mistake is a compile error:
/// `.createdAt` and `.updatedAt` for `Date` and `Date?`, `.deletedAt` for `Date?` (nil is
/// "not deleted"), `.lockVersion` for signed integers (`Int`, `Int64`, `Int32`…). A model has
/// at most one column of each role (a second is ``ActiveObjectError/invalidModel(model:reason:)``).
///
/// What each role does is described in <doc:TimestampsSoftDeleteAndLocking>.
public struct ColumnRole<Value>: Sendable, Hashable {
    /// Which role (the same for every `Value`).
    @usableFromInline let kind: ColumnRoleKind

    init(_ kind: ColumnRoleKind) { self.kind = kind }
}

/// The roles, without the type of the column they serve.
@usableFromInline
enum ColumnRoleKind: String, Sendable, Hashable, CaseIterable {
    case createdAt
    case updatedAt
    case deletedAt
    case lockVersion
}

extension ColumnRole where Value == Date {
    /// Set to the current date when the row is inserted (inside
    /// ``ActiveObject/withoutTimestamps(_:)-(()->R)``, the value the object holds is written).
    public static var createdAt: ColumnRole { ColumnRole(.createdAt) }
    /// Set to the current date when the row is inserted and by every save that writes a change.
    public static var updatedAt: ColumnRole { ColumnRole(.updatedAt) }
}

extension ColumnRole where Value == Date? {
    /// Set to the current date when the row is inserted with a nil value (inside
    /// ``ActiveObject/withoutTimestamps(_:)-(()->R)``, the value the object holds is written).
    public static var createdAt: ColumnRole { ColumnRole(.createdAt) }
    /// Set to the current date when the row is inserted and by every save that writes a change.
    public static var updatedAt: ColumnRole { ColumnRole(.updatedAt) }
    /// Soft delete: `delete()` sets it to the current date instead of deleting the row, and
    /// every read leaves rows where it is not NULL out, unless the query asks
    /// ``Query/withDeleted()`` or ``Query/onlyDeleted()``.
    public static var deletedAt: ColumnRole { ColumnRole(.deletedAt) }
}

extension ColumnRole where Value: FixedWidthInteger & SignedInteger {
    /// Optimistic locking: a save or delete checks that the row still holds the version the
    /// object was loaded with, and a save increments it; otherwise nothing is written and the
    /// call throws ``ActiveObjectError/staleObject(table:key:)``.
    public static var lockVersion: ColumnRole { ColumnRole(.lockVersion) }
}

/// The slots of a model's role columns (nil: the model has none of that role).
struct ModelRoles: Sendable {
    var createdAt: Int?
    var updatedAt: Int?
    var deletedAt: Int?
    var lockVersion: Int?

    /// True when the model has no role column: its writes take the plain paths.
    var isEmpty: Bool { createdAt == nil && updatedAt == nil && deletedAt == nil && lockVersion == nil }
    /// True when the model stamps dates.
    var hasTimestamps: Bool { createdAt != nil || updatedAt != nil }

    subscript(kind: ColumnRoleKind) -> Int? {
        get {
            switch kind {
            case .createdAt: createdAt
            case .updatedAt: updatedAt
            case .deletedAt: deletedAt
            case .lockVersion: lockVersion
            }
        }
        set {
            switch kind {
            case .createdAt: createdAt = newValue
            case .updatedAt: updatedAt = newValue
            case .deletedAt: deletedAt = newValue
            case .lockVersion: lockVersion = newValue
            }
        }
    }
}
