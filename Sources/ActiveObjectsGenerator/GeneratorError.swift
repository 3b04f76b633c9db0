/// Why `activeobjects-gen` could not generate models. The ``description`` is the message the
/// command prints (after `activeobjects-gen: error: `).
public enum GeneratorError: Error, Equatable, CustomStringConvertible {
    /// The command line is wrong (exit status 2).
    case usage(String)
    /// The schema file does not exist.
    case fileNotFound(String)
    /// The file exists but cannot be read.
    case cannotRead(String)
    /// The file is not an SQLite database (and does not end in `.sql`).
    case notADatabase(String)
    /// SQLite refused to open the database.
    case cannotOpen(String, String)
    /// A statement of a `.sql` script failed; `line` is 1-based.
    case invalidScript(file: String, line: Int, message: String)
    /// The schema has no table (or every table was skipped).
    case noTables(String)
    /// `--table` named a table the schema does not have.
    case unknownTable(String)
    /// The output file could not be written.
    case cannotWrite(String, String)

    /// The message `activeobjects-gen` prints before exiting.
    public var description: String {
        switch self {
        case .usage(let message): return message
        case .fileNotFound(let path): return "no such file: \(path)"
        case .cannotRead(let path): return "cannot read \(path)"
        case .notADatabase(let path):
            return "\(path) is not an SQLite database (give a .sql file for a script of CREATE statements)"
        case .cannotOpen(let path, let message): return "cannot open \(path): \(message)"
        case .invalidScript(let file, let line, let message): return "\(file):\(line): \(message)"
        case .noTables(let detail): return "no tables to generate models for: \(detail)"
        case .unknownTable(let name): return "no table named \(name) in the schema"
        case .cannotWrite(let path, let reason): return "cannot write \(path): \(reason)"
        }
    }

    /// The process exit status for this error: 2 for usage errors, 1 otherwise.
    public var exitStatus: Int32 {
        if case .usage = self { return 2 }
        return 1
    }
}
