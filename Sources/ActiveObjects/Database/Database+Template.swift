import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Database {
    /// Copies the template database at `templatePath` to `path` if — and only if — nothing
    /// exists at `path` yet, then opens `path`. Use it for a pre-populated database shipped
    /// with an app: the user's copy is never overwritten.
    ///
    /// ```swift
    /// let db = try Database(path: documentsPath, copyingTemplateAt: bundledPath)
    /// ```
    ///
    /// - The template is never modified (it may live in a read-only bundle).
    /// - A template in WAL mode whose `-wal` file holds transactions not yet checkpointed (and
    ///   a template with a leftover `-journal`) is copied together with that file, and the copy
    ///   is consolidated into a single self-contained file before it appears at `path`: no
    ///   committed row of the template is lost.
    /// - The copy is made beside `path` and moved into place with `link()`, which never
    ///   replaces an existing file; on a file system without hard links it is copied into a
    ///   file created with `O_CREAT | O_EXCL` instead. Either way an existing file is never
    ///   overwritten (if one appears meanwhile, it is opened as is), and a failed copy leaves
    ///   nothing at `path`.
    ///
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` when the template is missing and
    ///   `path` does not exist, or when the copy cannot be made (with the system's reason);
    ///   ``DatabaseError`` when the template is not a database (`notADatabase`) or its
    ///   journal cannot be applied, and when opening `path` fails.
    public convenience init(path: String, copyingTemplateAt templatePath: String, options: Options = Options()) throws {
        try TemplateCopy.install(template: templatePath, at: path)
        try self.init(path: path, options: options)
    }
}

/// Copies a template database file into place, once, safely (see
/// ``Database/init(path:copyingTemplateAt:options:)``).
enum TemplateCopy {
    /// How a finished copy is put in place: `link(2)` by default. Tests pass a function that
    /// fails like a file system without hard links.
    typealias Linker = (_ existing: String, _ new: String) -> Int32

    /// The journal files SQLite keeps beside a database, whose content belongs to it.
    static let journalSuffixes = ["-wal", "-journal"]

    /// Copies `template` to `path` unless something exists at `path`.
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` or ``DatabaseError`` (see the
    ///   public initializer).
    static func install(template: String, at path: String, link linker: Linker = { link($0, $1) }) throws {
        let files = FileManager.default
        guard !files.fileExists(atPath: path) else { return }
        guard files.fileExists(atPath: template) else {
            throw ActiveObjectError.invalidArgument("no template database at \(template)")
        }
        // Make the copy beside the destination (same file system, so it can be linked).
        let staging = path + ".partial-\(UUID().uuidString)"
        defer {
            for suffix in [""] + journalSuffixes + ["-shm"] { try? files.removeItem(atPath: staging + suffix) }
        }
        do {
            for suffix in [""] + journalSuffixes where suffix.isEmpty || fileSize(template + suffix) > 0 {
                try files.copyItem(atPath: template + suffix, toPath: staging + suffix)
                // The copy keeps the template's permissions; a template in a read-only bundle
                // must still give the user a writable database.
                let mode = (try files.attributesOfItem(atPath: staging + suffix)[.posixPermissions] as? NSNumber)?
                    .uint16Value ?? 0o644
                try files.setAttributes([.posixPermissions: NSNumber(value: mode | 0o600)],
                                        ofItemAtPath: staging + suffix)
            }
        } catch {
            throw ActiveObjectError.invalidArgument(
                "cannot copy the template database to \(path): \(error.localizedDescription)")
        }
        try consolidate(staging)

        // link() refuses to replace an existing file (rename() would not): a file that
        // appeared meanwhile is never overwritten, and the copy appears whole or not at all.
        if linker(staging, path) == 0 { return }
        let linkError = errno
        if linkError == EEXIST { return }
        try copyExclusively(staging, to: path, linkError: linkError)
    }

    /// Opens the staged copy, applies its journal (a WAL is checkpointed into the main file, a
    /// hot rollback journal rolled back), leaves it in rollback-journal mode so that it is one
    /// self-contained file, and checks that it is a database.
    /// - Throws: ``DatabaseError``.
    static func consolidate(_ staging: String) throws {
        var connection: OpaquePointer?
        let status = sqlite3_open_v2(staging, &connection, SQLITE_OPEN_READWRITE, nil)
        defer { sqlite3_close_v2(connection) }
        guard status == SQLITE_OK, let connection else {
            throw DatabaseError(code: status, connection: connection, sql: nil)
        }
        for sql in ["SELECT count(*) FROM sqlite_master", "PRAGMA journal_mode = DELETE"] {
            let result = sqlite3_exec(connection, sql, nil, nil, nil)
            guard result == SQLITE_OK else { throw DatabaseError(code: result, connection: connection, sql: sql) }
        }
    }

    /// The fallback for file systems without hard links: creates `path` with `O_EXCL` (so an
    /// existing file is never touched) and copies the staged file into it. Writes the first
    /// page last, so that an interrupted copy never starts like an SQLite database; on any
    /// error the file it created is removed.
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` with the system's reasons.
    static func copyExclusively(_ staging: String, to path: String, linkError: Int32) throws {
        let destination = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard destination >= 0 else {
            let createError = errno
            if createError == EEXIST { return }
            throw ActiveObjectError.invalidArgument(
                "cannot create \(path) from the template: link() failed (\(describe(linkError))) and so did "
                    + "creating the file (\(describe(createError)))")
        }
        var finished = false
        defer {
            close(destination)
            if !finished { unlink(path) }
        }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: staging))
        } catch {
            throw ActiveObjectError.invalidArgument("cannot read the copy of the template: \(error.localizedDescription)")
        }
        let headerLength = min(bytes.count, 100)
        try bytes.withUnsafeBytes { buffer in
            try writeAll(UnsafeRawBufferPointer(rebasing: buffer[headerLength...]), to: destination,
                         at: headerLength, path: path)
            guard fsync(destination) == 0 else { throw failure("fsync", path) }
            try writeAll(UnsafeRawBufferPointer(rebasing: buffer[..<headerLength]), to: destination, at: 0, path: path)
            guard fsync(destination) == 0 else { throw failure("fsync", path) }
        }
        finished = true
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to file: Int32, at offset: Int, path: String) throws {
        var written = 0
        while written < bytes.count, let base = bytes.baseAddress {
            let result = pwrite(file, base + written, bytes.count - written, off_t(offset + written))
            if result < 0 {
                if errno == EINTR { continue }
                throw failure("write", path)
            }
            written += result
        }
    }

    private static func failure(_ call: String, _ path: String) -> ActiveObjectError {
        .invalidArgument("cannot copy the template to \(path): \(call) failed (\(describe(errno)))")
    }

    private static func describe(_ code: Int32) -> String {
        "errno \(code): \(String(cString: strerror(code)))"
    }

    /// The size of the file at `path`, or 0 when there is none.
    private static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
