import ActiveObjects
import CSQLite
import Foundation

/// Opens a schema given on the command line: a database file (read-only) or a `.sql` script
/// (run into a private in-memory database).
enum SchemaSource {
    /// An open schema: the database, and the virtual tables of a script, which are not run.
    struct Opened {
        var database: Database
        var virtualTables: [TableInfo] = []
    }

    /// The database holding the schema at `path`.
    /// - Throws: ``GeneratorError`` for a missing file, a file that is not a database, or a
    ///   script that SQLite refuses (with the line).
    static func open(_ path: String) throws -> Opened {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw GeneratorError.fileNotFound(path)
        }
        if path.lowercased().hasSuffix(".sql") {
            guard let data = FileManager.default.contents(atPath: path) else { throw GeneratorError.cannotRead(path) }
            guard let script = String(data: data, encoding: .utf8) else {
                throw GeneratorError.invalidScript(file: fileName(path), line: 1, message: "the file is not UTF-8 text")
            }
            return try run(script: script, fileName: fileName(path))
        }
        return Opened(database: try openDatabase(path))
    }

    /// The last path component: what the output and messages name, so that they do not
    /// depend on where the file lives.
    static func fileName(_ path: String) -> String {
        URL(fileURLWithPath: path).lastPathComponent
    }

    /// Opens a database file read-only; SQLite never writes to it.
    private static func openDatabase(_ path: String) throws -> Database {
        // Every SQLite 3 file starts with this header (https://www.sqlite.org/fileformat.html);
        // an empty file is an empty database.
        guard let handle = FileHandle(forReadingAtPath: path) else { throw GeneratorError.cannotRead(path) }
        let header = handle.readData(ofLength: 16)
        try? handle.close()
        if !header.isEmpty && header != Data("SQLite format 3\0".utf8) {
            throw GeneratorError.notADatabase(path)
        }
        var options = Database.Options()
        options.readOnly = true
        do {
            return try Database(path: path, options: options)
        } catch let error as DatabaseError where error.resultCode == .notADatabase {
            throw GeneratorError.notADatabase(path)
        } catch let error as DatabaseError {
            throw GeneratorError.cannotOpen(path, error.message)
        }
    }

    /// Runs `script` one statement at a time into a new in-memory database.
    ///
    /// `CREATE VIRTUAL TABLE` statements are not run but returned: no model maps a virtual
    /// table, its module (a custom tokenizer, spellfix1…) may not be available here, and a
    /// connected FTS5 table keeps statements of its own open on the connection.
    static func run(script: String, fileName: String) throws -> Opened {
        let db = try Database.inMemory()
        var virtualTables: [TableInfo] = []
        for statement in statements(in: script) {
            if let name = virtualTableName(statement.sql) {
                virtualTables.append(TableInfo(name: name, sql: statement.sql, kind: "virtual", withoutRowID: false,
                                               columns: [], indexes: [], foreignKeys: []))
                continue
            }
            do {
                try db.execute(statement.sql)
            } catch let error as DatabaseError {
                throw GeneratorError.invalidScript(file: fileName, line: statement.errorLine(for: error.message),
                                                   message: error.message)
            } catch {
                throw GeneratorError.invalidScript(file: fileName, line: statement.line, message: "\(error)")
            }
        }
        return Opened(database: db, virtualTables: virtualTables)
    }

    /// The table a `CREATE VIRTUAL TABLE [IF NOT EXISTS] [main.]name USING …` statement
    /// creates, unquoted; nil for any other statement.
    static func virtualTableName(_ sql: String) -> String? {
        var tokens = SQLTokens(sql)
        guard tokens.keyword("CREATE"), tokens.keyword("VIRTUAL"), tokens.keyword("TABLE") else { return nil }
        if tokens.keyword("IF") { _ = tokens.keyword("NOT"); _ = tokens.keyword("EXISTS") }
        guard var name = tokens.identifier() else { return nil }
        if tokens.symbol("."), let table = tokens.identifier() { name = table }
        return name
    }

    /// One statement of a script and the line it starts on (1-based).
    struct Statement: Equatable {
        var sql: String
        var line: Int

        /// The line SQLite's message points at: the line of the token in `near "…"` when it
        /// occurs in the statement, else the statement's first line.
        func errorLine(for message: String) -> Int {
            guard let open = message.range(of: "near \""),
                  let close = message[open.upperBound...].range(of: "\": ") ?? message[open.upperBound...].range(of: "\"") else {
                return line
            }
            let token = message[open.upperBound..<close.lowerBound]
            guard !token.isEmpty, let found = sql.range(of: token) else { return line }
            return line + sql[..<found.lowerBound].filter { $0 == "\n" }.count
        }
    }

    /// Splits a script into statements where SQLite itself would: at a `;` that makes the text
    /// so far complete by `sqlite3_complete` (<https://www.sqlite.org/c3ref/complete.html>),
    /// which knows about strings, comments, and the `;`s inside `CREATE TRIGGER … END`.
    /// Stretches holding only comments and whitespace are dropped.
    static func statements(in script: String) -> [Statement] {
        let bytes = Array(script.utf8)
        var result: [Statement] = []
        var start = 0
        var line = 1  // the line at `start`

        func emit(upTo end: Int) {
            let chunk = Array(bytes[start..<end])
            if let content = firstContentIndex(chunk) {
                let before = chunk[..<content].filter { $0 == UInt8(ascii: "\n") }.count
                result.append(Statement(sql: String(decoding: chunk[content...], as: UTF8.self), line: line + before))
            }
            line += chunk.filter { $0 == UInt8(ascii: "\n") }.count
            start = end
        }

        for index in bytes.indices where bytes[index] == UInt8(ascii: ";") {
            let candidate = Array(bytes[start...index]) + [0]
            let complete = candidate.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { sqlite3_complete($0) }
            }
            if complete != 0 { emit(upTo: index + 1) }
        }
        emit(upTo: bytes.count)  // a last statement without `;`
        return result
    }

    /// The index of the first byte that is not whitespace, `;` or inside a comment.
    private static func firstContentIndex(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let next = index + 1 < bytes.count ? bytes[index + 1] : 0
            if byte == UInt8(ascii: "-") && next == UInt8(ascii: "-") {
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
            } else if byte == UInt8(ascii: "/") && next == UInt8(ascii: "*") {
                index += 2
                while index < bytes.count && !(bytes[index] == UInt8(ascii: "*") && index + 1 < bytes.count
                                                && bytes[index + 1] == UInt8(ascii: "/")) { index += 1 }
                index += 2
            } else if byte == UInt8(ascii: ";") || byte == 0x20 || (0x09...0x0D).contains(byte) {
                index += 1
            } else {
                return index
            }
        }
        return nil
    }
}
