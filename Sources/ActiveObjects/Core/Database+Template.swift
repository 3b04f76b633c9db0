import Foundation

extension Database {
    /// Copies the template database at `templatePath` to `path` if — and only if — nothing
    /// exists at `path` yet, then opens `path`. Use it for a pre-populated database shipped
    /// with an app: the user's copy is never overwritten.
    ///
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` when the template is missing and
    ///   `path` does not exist; ``DatabaseError`` when opening fails.
    public convenience init(path: String, copyingTemplateAt templatePath: String, options: Options = Options()) throws {
        let files = FileManager.default
        if !files.fileExists(atPath: path) {
            guard files.fileExists(atPath: templatePath) else {
                throw ActiveObjectError.invalidArgument("no template database at \(templatePath)")
            }
            // Copy beside the destination, then link it into place: link() refuses to replace
            // an existing file (rename() would not), so a file that appeared meanwhile is never
            // overwritten, and a crash mid-copy never leaves a half-written database at `path`.
            let partial = path + ".partial-\(UUID().uuidString)"
            defer { try? files.removeItem(atPath: partial) }
            do {
                try files.copyItem(atPath: templatePath, toPath: partial)
            } catch {
                throw ActiveObjectError.invalidArgument("cannot copy the template database to \(path): \(error.localizedDescription)")
            }
            if link(partial, path) != 0 && errno != EEXIST {
                throw ActiveObjectError.invalidArgument("cannot create \(path) from the template (errno \(errno))")
            }
        }
        try self.init(path: path, options: options)
    }
}
