import Testing
@testable import ActiveObjectsGenerator

@Suite("Generator: .sql scripts")
struct ScriptSplittingTests {
    @Test("a script splits into statements with their first line")
    func statements() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE a (x TEXT DEFAULT ';');   CREATE TABLE b (y);
            /* block; comment */

            CREATE TRIGGER t AFTER INSERT ON a BEGIN
                UPDATE a SET x = 'a;b';
                SELECT 1;
            END;
            CREATE TABLE c (z)
            """
        let statements = SchemaSource.statements(in: script)
        #expect(statements.map(\.line) == [2, 2, 5, 9])
        #expect(statements[0].sql == "CREATE TABLE a (x TEXT DEFAULT ';');")
        #expect(statements[1].sql == "CREATE TABLE b (y);")
        #expect(statements[2].sql.hasPrefix("CREATE TRIGGER t") && statements[2].sql.hasSuffix("END;"))
        #expect(statements[3].sql == "CREATE TABLE c (z)")
    }

    @Test("comments and empty statements produce nothing")
    func blank() {
        #expect(SchemaSource.statements(in: "-- nothing\n;;\n/* at all */\n").isEmpty)
        #expect(SchemaSource.statements(in: "").isEmpty)
    }

    @Test("a syntax error names the line of the offending token")
    func errorLine() throws {
        let script = "CREATE TABLE a (x);\n\nCREATE TABLE b (\n    y TEXT,\n    z TEXT,\n);\n"
        #expect(throws: GeneratorError.self) { try SchemaSource.run(script: script, fileName: "s.sql") }
        do {
            _ = try SchemaSource.run(script: script, fileName: "s.sql")
        } catch let error as GeneratorError {
            guard case .invalidScript(let file, let line, let message) = error else {
                Issue.record("unexpected \(error)"); return
            }
            #expect(file == "s.sql")
            #expect(line == 6)
            #expect(message.contains("syntax error"))
        }
    }

    @Test("CREATE VIRTUAL TABLE statements are recognised, with the table's name unquoted", arguments: [
        ("CREATE VIRTUAL TABLE docs USING fts5(body)", "docs"),
        ("create virtual table if not exists main.docs using fts5(body)", "docs"),
        ("CREATE VIRTUAL TABLE \"my \"\"docs\"\"\" USING fts5(body)", "my \"docs\""),
        ("CREATE VIRTUAL TABLE [odd name] USING rtree(id, a, b)", "odd name"),
        ("/* note */ CREATE -- here\n VIRTUAL TABLE `x` USING fts4(y)", "x"),
    ])
    func virtualTables(sql: String, name: String) {
        #expect(SchemaSource.virtualTableName(sql) == name)
    }

    @Test("other statements are not virtual tables")
    func notVirtualTables() {
        #expect(SchemaSource.virtualTableName("CREATE TABLE docs (body TEXT)") == nil)
        #expect(SchemaSource.virtualTableName("CREATE VIEW virtual AS SELECT 1") == nil)
        #expect(SchemaSource.virtualTableName("CREATE VIRTUAL TABLE") == nil)
        #expect(SchemaSource.virtualTableName("INSERT INTO docs VALUES ('CREATE VIRTUAL TABLE x')") == nil)
    }
}
