import Foundation
import Testing
@testable import ActiveObjectsGenerator

@Suite("Generator: command line and errors")
struct GeneratorCommandTests {
    @Test("--help prints the usage and exits 0")
    func help() {
        let result = CommandResult(["--help"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("USAGE: activeobjects-gen SCHEMA [--table NAME]... [--output FILE] [--naming as-is|snake|upper-snake]"))
    }

    @Test("arguments parse in any order, with = or a separate value")
    func parsing() throws {
        let parsed = try GeneratorCommand.parse(["--naming=snake", "s.sql", "--table", "a", "--table=b", "-o", "out.swift"])
        #expect(parsed.schema == "s.sql")
        #expect(parsed.output == "out.swift")
        #expect(parsed.options.tables == ["a", "b"])
        #expect(parsed.options.naming == .snake)
    }

    @Test("usage errors exit 2", arguments: [
        [], ["a.sql", "b.sql"], ["--naming", "camel", "a.sql"], ["--table"], ["--bogus", "a.sql"],
    ])
    func usageErrors(arguments: [String]) {
        let result = CommandResult(arguments)
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("activeobjects-gen: error: "))
        #expect(result.standardOutput.isEmpty)
    }

    @Test("a missing file is an error")
    func missingFile() throws {
        let scratch = try ScratchDirectory()
        let result = CommandResult([scratch.path("nothing.sqlite")])
        #expect(result.status == 1)
        #expect(result.standardError.contains("no such file: "))
    }

    @Test("a file that is not a database is an error, and is left alone")
    func notADatabase() throws {
        let scratch = try ScratchDirectory()
        let path = try scratch.write("hello, I am not SQLite, but I am long enough", to: "notes.db")
        let result = CommandResult([path])
        #expect(result.status == 1)
        #expect(result.standardError.contains("is not an SQLite database"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "hello, I am not SQLite, but I am long enough")
    }

    @Test("an SQL error names the file and the line")
    func syntaxError() throws {
        let scratch = try ScratchDirectory()
        let path = try scratch.write("CREATE TABLE a (id INTEGER PRIMARY KEY);\n\nCREATE TABEL b (id INTEGER PRIMARY KEY);\n", to: "broken.sql")
        let result = CommandResult([path])
        #expect(result.status == 1)
        #expect(result.standardError == "activeobjects-gen: error: broken.sql:3: near \"TABEL\": syntax error\n")
        #expect(result.standardOutput.isEmpty)
    }

    @Test("a schema without tables is an error; so is one whose tables are all skipped")
    func noTables() throws {
        let scratch = try ScratchDirectory()
        let empty = CommandResult([try scratch.write("-- nothing yet\n", to: "empty.sql")])
        #expect(empty.status == 1)
        #expect(empty.standardError.contains("no tables to generate models for: empty.sql has none"))
        let emptyDatabase = CommandResult([try scratch.write("", to: "empty.sqlite")])
        #expect(emptyDatabase.status == 1)
        #expect(emptyDatabase.standardError.contains("has none"))
        // A view over a table that is not there cannot be read (SQLite creates it all the same).
        let skipped = CommandResult([try scratch.write(
            "CREATE TABLE t (rowid TEXT, b TEXT);\nCREATE VIEW v AS SELECT b FROM missing;\n", to: "skipped.sql")])
        #expect(skipped.status == 1)
        #expect(skipped.standardError.contains(
            "every table was skipped: t (no primary key, and its column rowid hides the rowid that would identify rows), "
            + "v (a view SQLite cannot read (no such table: main.missing))"))
    }

    @Test("--output writes the file; warnings go to standard error")
    func outputFile() throws {
        let scratch = try ScratchDirectory()
        let output = scratch.path("Models.swift")
        let result = CommandResult([Fixture.path("ormapper.sql"), "--naming", "snake", "--output", output])
        #expect(result.status == 0)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.isEmpty)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == (try Fixture.text("ormapper.swift.expected")))
    }
}
