import Foundation
import Testing
@testable import ActiveObjects

/// `DEFAULT` literals, and defaults that must survive `createTable()` byte for byte.
@Suite struct SQLLiteralTests {
    static let awkward = "a\u{0}b'c\u{0}é"

    /// The table before the column existed.
    final class NulDefaultBefore: ModelTestRecord {
        override class var tableName: String { "nul_default" }
        @Column var name = ""
    }

    /// The same table once the model gained a column whose default contains NUL.
    final class NulDefaultAfter: ModelTestRecord {
        override class var tableName: String { "nul_default" }
        @Column var name = ""
        @Column var marker: String = SQLLiteralTests.awkward
        @Column var optionalMarker: String? = "x\u{0}"
    }

    @Test func literalsOfEachKind() throws {
        #expect(try SQLLiteral.render(.null) == "NULL")
        #expect(try SQLLiteral.render(.integer(-42)) == "-42")
        #expect(try SQLLiteral.render(.real(1.5)) == "(1.5)")
        #expect(try SQLLiteral.render(.real(-.infinity)) == "-9e999")
        #expect(try SQLLiteral.render(.text("it's")) == "'it''s'")
        #expect(try SQLLiteral.render(.blob(Data([0xCA, 0xFE]))) == "X'CAFE'")
        #expect(try SQLLiteral.render(.text("a\u{0}b")) == "(CAST(X'610062' AS TEXT))")
    }

    @Test func textWithNulHasNoLiteralInAUTF16Database() {
        #expect(throws: SQLLiteral.Unrenderable.self) {
            _ = try SQLLiteral.render(.text("a\u{0}b"), textEncoding: .utf16le)
        }
        #expect((try? SQLLiteral.render(.text("ab"), textEncoding: .utf16be)) == "'ab'")
    }

    @Test func aDefaultContainingNulRoundTripsWhenTheTableIsCreated() throws {
        try withModelDB { db in
            try NulDefaultAfter.createTable()
            try db.execute("INSERT INTO nul_default (name) VALUES ('raw')")
            let raw: String? = try db.scalar("SELECT marker FROM nul_default")
            #expect(raw == Self.awkward)
            let loaded = try NulDefaultAfter.findAll()
            #expect(loaded.map(\.marker) == [Self.awkward])
            #expect(loaded.map(\.optionalMarker) == ["x\u{0}"])
        }
    }

    @Test func aDefaultContainingNulRoundTripsWhenTheColumnIsAddedToAPopulatedTable() throws {
        try withModelDB { db in
            try NulDefaultBefore.createTable()
            for name in ["one", "two"] {
                let row = NulDefaultBefore()
                row.name = name
                try row.save()
            }
            try NulDefaultAfter.createTable()
            let loaded = try NulDefaultAfter.all.order(by: \.$name).all()
            #expect(loaded.map(\.name) == ["one", "two"])
            #expect(loaded.map(\.marker) == [Self.awkward, Self.awkward])
            #expect(loaded.map(\.optionalMarker) == ["x\u{0}", "x\u{0}"])
            // Byte-exact, as SQLite stores it.
            let hex: [String] = try db.rows("SELECT hex(marker) FROM nul_default").map { try $0[0] }
            let expected = Data(Self.awkward.utf8).map { String(format: "%02X", $0) }.joined()
            #expect(hex == [expected, expected])
            let types: [String] = try db.rows("SELECT typeof(marker) FROM nul_default").map { try $0[0] }
            #expect(types == ["text", "text"])
            // Running it again changes nothing.
            try NulDefaultAfter.createTable()
        }
    }

    @Test func aUTF16DatabaseRefusesSuchADefaultClearlyAndChangesNothing() throws {
        try withModelDB { db in
            try db.execute("PRAGMA encoding = 'UTF-16le'")
            try NulDefaultBefore.createTable()
            let error = expectActiveObjectError { try NulDefaultAfter.createTable() }
            guard case let .invalidValue(table, column, reason)? = error else {
                Issue.record("expected invalidValue, got \(String(describing: error))")
                return
            }
            #expect(table == "nul_default")
            #expect(column == "marker")
            #expect(reason.contains("UTF-16"))
            #expect(try columnNames(db, "nul_default") == ["id", "name"])
        }
    }
}
