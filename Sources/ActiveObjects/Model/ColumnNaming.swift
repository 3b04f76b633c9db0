/// How property names become column names (an explicit `@Column("name")` always wins).
///
/// ```swift
/// final class Album: ActiveObject {
///     override class var columnNaming: ColumnNaming { .upperSnakeCase }  // artistID → ARTIST_ID
///     @Column var artistID: Int = 0
/// }
/// ```
public enum ColumnNaming: Sendable {
    /// The property name unchanged (the default).
    case asIs
    /// `lastPlayedDate` → `last_played_date`, `artistID` → `artist_id`.
    case snakeCase
    /// `lastPlayedDate` → `LAST_PLAYED_DATE`, `artistID` → `ARTIST_ID`.
    case upperSnakeCase
    /// Your own mapping.
    case custom(@Sendable (String) -> String)

    /// The column name for a property name.
    public func columnName(for property: String) -> String {
        switch self {
        case .asIs: return property
        case .snakeCase: return Self.snakeCased(property)
        case .upperSnakeCase: return Self.snakeCased(property).uppercased()
        case .custom(let transform): return transform(property)
        }
    }

    /// Splits camel case into lowercase words joined by `_`, keeping acronyms together:
    /// `BlogPost` → `blog_post`, `artistID` → `artist_id`, `URLValue` → `url_value`.
    static func snakeCased(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase {
                let previous = index > 0 ? characters[index - 1] : nil
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                let startsWord = previous.map { $0.isLowercase || $0.isNumber } ?? false
                let endsAcronym = (previous?.isUppercase ?? false) && (next?.isLowercase ?? false)
                if index > 0 && (startsWord || endsAcronym) && result.last != "_" { result.append("_") }
                result.append(contentsOf: character.lowercased())
            } else {
                result.append(character)
            }
        }
        return result
    }
}
