import Foundation
import Testing
@testable import ActiveObjects

/// Issue 11 item 8: opening a legacy file with the default options converts it to WAL (for
/// good: WAL is a property of the file); `journalMode = .delete` leaves it as it is.
@Suite struct JournalModeTests {
    static func legacyFile(_ folder: borrowing TemporaryDirectory) throws -> String {
        let path = folder.path("legacy.sqlite")
        var options = Database.Options()
        options.journalMode = .delete
        let db = try Database(path: path, options: options)
        try db.execute("CREATE TABLE t (x)")
        try db.close()
        return path
    }

    static func mode(_ path: String) throws -> String? {
        var options = Database.Options()
        options.journalMode = .delete
        options.readOnly = true
        let db = try Database(path: path, options: options)
        defer { try? db.close() }
        return try db.scalar("PRAGMA journal_mode")
    }

    @Test func theDefaultOptionsConvertALegacyFileToWAL() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.legacyFile(folder)
        #expect(try Self.mode(path) == "delete")
        let db = try Database(path: path)
        #expect(db.usesReaderConnections)
        try db.close()
        #expect(try Self.mode(path) == "wal")
    }

    @Test func deleteModeKeepsALegacyFileAsItIs() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.legacyFile(folder)
        var options = Database.Options()
        options.journalMode = .delete
        let db = try Database(path: path, options: options)
        #expect(!db.usesReaderConnections)
        try db.execute("INSERT INTO t VALUES (1)")
        try db.close()
        #expect(try Self.mode(path) == "delete")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }
}
