import Testing
@testable import ActiveObjectsGenerator

@Suite("Generator: types and defaults")
struct TypeMappingTests {
    @Test("declared types map by SQLite's affinity rules", arguments: [
        ("INTEGER", SwiftType.int), ("INT", .int), ("BIGINT", .int), ("UNSIGNED BIG INT", .int),
        ("REAL", .double), ("FLOAT", .double), ("DOUBLE PRECISION", .double),
        ("TEXT", .string), ("VARCHAR(80)", .string), ("CHARACTER(5)", .string), ("CLOB", .string),
        ("BLOB", .data), ("DATE", .date), ("DATETIME", .date), ("TIMESTAMP", .date), ("timestamp", .date),
        ("BOOLEAN", .bool), ("BOOL", .bool), ("NUMERIC", .decimal), ("DECIMAL(10,2)", .decimal),
        ("MONEY", .decimal), ("TIME", .string), ("JSON", .string),
        ("UUID", .uuid), ("uuid", .uuid), ("GUID", .uuid), ("UNIQUEIDENTIFIER", .uuid),
    ])
    func declaredTypes(declared: String, expected: SwiftType) {
        #expect(TypeMapping.swiftType(declared: declared, isKey: false).type == expected)
    }

    @Test("integer keys are Int64; untyped columns are String with a note, keys or not")
    func keys() {
        #expect(TypeMapping.swiftType(declared: "INTEGER", isKey: true).type == .int64)
        #expect(TypeMapping.swiftType(declared: "INT", isKey: true).type == .int64)
        #expect(TypeMapping.swiftType(declared: "TEXT", isKey: true).type == .string)
        for isKey in [false, true] {
            let untyped = TypeMapping.swiftType(declared: "", isKey: isKey)
            #expect(untyped.type == .string)
            #expect(untyped.note != nil)
        }
    }

    @Test("SQL defaults are parsed as literals")
    func parsing() {
        #expect(SQLDefault(sql: "0") == .integer(0))
        #expect(SQLDefault(sql: "-5") == .integer(-5))
        #expect(SQLDefault(sql: "0x10") == .integer(16))
        #expect(SQLDefault(sql: "(2)") == .integer(2))
        #expect(SQLDefault(sql: "1.50") == .real(1.5, text: "1.50"))
        #expect(SQLDefault(sql: "'it''s'") == .text("it's"))
        #expect(SQLDefault(sql: "X'CAFE'") == .blob([0xCA, 0xFE]))
        #expect(SQLDefault(sql: "TRUE") == .bool(true))
        #expect(SQLDefault(sql: "NULL") == .null)
        #expect(SQLDefault(sql: "CURRENT_TIMESTAMP") == .expression("CURRENT_TIMESTAMP"))
        #expect(SQLDefault(sql: "(datetime('now'))") == .expression("(datetime('now'))"))
        #expect(SQLDefault(sql: "'a' || 'b'") == .expression("'a' || 'b'"))
    }

    @Test("defaults become Swift literals of the property's type")
    func literals() {
        #expect(SQLDefault(sql: "7").swiftLiteral(for: .int) == "7")
        #expect(SQLDefault(sql: "7").swiftLiteral(for: .double) == "7")
        #expect(SQLDefault(sql: "1.5").swiftLiteral(for: .double) == "1.5")
        #expect(SQLDefault(sql: "1.5").swiftLiteral(for: .int) == nil)
        #expect(SQLDefault(sql: "0.10").swiftLiteral(for: .decimal) == "Decimal(string: \"0.10\")!")
        #expect(SQLDefault(sql: "1").swiftLiteral(for: .bool) == "true")
        #expect(SQLDefault(sql: "FALSE").swiftLiteral(for: .bool) == "false")
        #expect(SQLDefault(sql: "42").swiftLiteral(for: .string) == "\"42\"")
        #expect(SQLDefault(sql: "'5'").swiftLiteral(for: .int) == "5")
        #expect(SQLDefault(sql: "X''").swiftLiteral(for: .data) == "Data()")
        #expect(SQLDefault(sql: "X'00FF'").swiftLiteral(for: .data) == "Data([0x00, 0xFF])")
        #expect(SQLDefault(sql: "'2000-01-01'").swiftLiteral(for: .date) == "Date(timeIntervalSince1970: 946684800)")
        #expect(SQLDefault(sql: "CURRENT_TIMESTAMP").swiftLiteral(for: .date) == nil)
        #expect(SQLDefault(sql: "'e621e1f8-c36c-495a-93fc-0c247a3e6e5f'").swiftLiteral(for: .uuid)
                == "UUID(uuidString: \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\")!")
        #expect(SQLDefault(sql: "'not a uuid'").swiftLiteral(for: .uuid) == nil)
        #expect(SQLDefault(sql: "NULL").swiftLiteral(for: .string) == nil)
    }

    @Test("string literals escape quotes, backslashes, interpolation and control characters")
    func stringEscaping() {
        #expect(SQLDefault.swiftString(#"say "hi" \(x)"#) == #""say \"hi\" \\(x)""#)
        #expect(SQLDefault.swiftString("a\nb\tc\u{1}") == #""a\nb\tc\u{1}""#)
    }

    @Test("zero values of non-optional properties without a literal default")
    func zeroValues() {
        #expect(SwiftType.int.zeroValue == "0")
        #expect(SwiftType.string.zeroValue == "\"\"")
        #expect(SwiftType.data.zeroValue == "Data()")
        #expect(SwiftType.bool.zeroValue == "false")
        #expect(SwiftType.date.zeroValue == "Date()")  // the moment the object is made, never 1970
        #expect(SwiftType.uuid.zeroValue == "UUID()")
    }
}
