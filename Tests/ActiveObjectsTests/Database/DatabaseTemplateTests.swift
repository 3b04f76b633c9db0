import Foundation
import Testing
@testable import ActiveObjects
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `Database(path:copyingTemplateAt:)` with templates that are not a single quiet file, and on
/// file systems without hard links.
@Suite struct DatabaseTemplateTests {
    /// Writes a WAL template of `rows` rows whose transactions all sit in its `-wal` file:
    /// the files are copied to `bundle` while the writer still has the database open, as a
    /// template shipped without a checkpoint would be.
    func makeWALTemplate(in dir: borrowing TemporaryDirectory, rows: Int) throws -> String {
        let working = dir.path("working.sqlite")
        var options = Database.Options()
        options.journalMode = .wal
        let writer = try Database(path: working, options: options)
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT NOT NULL)")
        try writer.transaction {
            for index in 0..<rows { try writer.execute("INSERT INTO t (x) VALUES (?)", ["row \(index)"]) }
        }
        let bundle = dir.path("bundle")
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        let template = bundle + "/template.sqlite"
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: working + suffix, toPath: template + suffix)
        }
        try writer.close()
        return template
    }

    /// The files of a folder with their bytes.
    func snapshot(_ folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            files[name] = try fileBytes(folder + "/" + name)
        }
        return files
    }

    @Test func aWALTemplateWithAnUncheckpointedLogLosesNoRow() throws {
        let dir = try TemporaryDirectory()
        let template = try makeWALTemplate(in: dir, rows: 50)
        let bundle = (template as NSString).deletingLastPathComponent
        #expect(try fileBytes(template + "-wal").count > 0)
        let before = try snapshot(bundle)

        let destination = dir.path("user.sqlite")
        let db = try Database(path: destination, copyingTemplateAt: template)
        #expect(try count(db, "SELECT count(*) FROM t") == 50)
        #expect(try db.scalar("SELECT x FROM t WHERE id = 50") == "row 49")
        #expect(try db.scalar("PRAGMA integrity_check") == "ok")
        try db.close()

        // The template (main file and log) is untouched, and nothing was added beside it.
        #expect(try snapshot(bundle) == before)
        // The copy stands alone: without any journal next to it, it still has every row.
        for suffix in ["-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: destination + suffix) }
        let reopened = try Database(path: destination)
        #expect(try count(reopened, "SELECT count(*) FROM t") == 50)
        #expect(try !dir.fileNames().contains { $0.contains(".partial") })
    }

    @Test func withoutHardLinksTheTemplateIsCopiedIntoAnExclusivelyCreatedFile() throws {
        let dir = try TemporaryDirectory()
        let template = try makeWALTemplate(in: dir, rows: 3)
        let destination = dir.path("user.sqlite")
        var linkCalls = 0
        try TemplateCopy.install(template: template, at: destination) { _, _ in
            linkCalls += 1
            errno = EPERM                          // "operation not permitted": FAT, exFAT, some network shares
            return -1
        }
        #expect(linkCalls == 1)
        let db = try Database(path: destination)
        #expect(try count(db, "SELECT count(*) FROM t") == 3)
        #expect(try db.scalar("PRAGMA integrity_check") == "ok")
        try db.execute("INSERT INTO t (x) VALUES ('mine')")
        try db.close()
        #expect(try !dir.fileNames().contains { $0.contains(".partial") })
    }

    @Test func withoutHardLinksAFileThatAppearedMeanwhileIsNeverOverwritten() throws {
        let dir = try TemporaryDirectory()
        let template = try makeWALTemplate(in: dir, rows: 3)
        let destination = dir.path("user.sqlite")
        let userData = Data("the user's own file".utf8)
        try TemplateCopy.install(template: template, at: destination) { _, new in
            // Another process creates the destination just before our fallback copy.
            _ = FileManager.default.createFile(atPath: new, contents: userData)
            errno = EPERM
            return -1
        }
        #expect(try fileBytes(destination) == userData)
        #expect(try !dir.fileNames().contains { $0.contains(".partial") })
    }

    @Test func whenLinkReportsAnExistingFileTheCopyIsDropped() throws {
        let dir = try TemporaryDirectory()
        let template = try makeWALTemplate(in: dir, rows: 3)
        let destination = dir.path("user.sqlite")
        let userData = Data("already there".utf8)
        try TemplateCopy.install(template: template, at: destination) { _, new in
            _ = FileManager.default.createFile(atPath: new, contents: userData)
            errno = EEXIST
            return -1
        }
        #expect(try fileBytes(destination) == userData)
        #expect(try !dir.fileNames().contains { $0.contains(".partial") })
    }

    @Test func aTemplateThatIsNotADatabaseLeavesNothingAtTheDestination() throws {
        let dir = try TemporaryDirectory()
        let template = dir.path("template.sqlite")
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: template))
        let destination = dir.path("user.sqlite")
        expectDatabaseError(.notADatabase) {
            _ = try Database(path: destination, copyingTemplateAt: template)
        }
        #expect(!FileManager.default.fileExists(atPath: destination))
        #expect(try dir.fileNames() == ["template.sqlite"])
    }

    @Test func aReadOnlyTemplateGivesAWritableCopy() throws {
        let dir = try TemporaryDirectory()
        let template = dir.path("template.sqlite")
        var options = Database.Options()
        options.journalMode = .delete
        do {
            let db = try Database(path: template, options: options)
            try db.execute("CREATE TABLE t(x)")
            try db.execute("INSERT INTO t VALUES (1)")
            try db.close()
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: template)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: template) }
        let db = try Database(path: dir.path("user.sqlite"), copyingTemplateAt: template)
        let mode = try FileManager.default.attributesOfItem(atPath: dir.path("user.sqlite"))[.posixPermissions] as? NSNumber
        #expect((mode?.uint16Value ?? 0) & 0o600 == 0o600)
        try db.execute("INSERT INTO t VALUES (2)")
        #expect(try count(db, "SELECT count(*) FROM t") == 2)
    }
}
