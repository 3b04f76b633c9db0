import Foundation

/// The bearer tokens the server accepts, and the user each one authenticates, read from a
/// token file:
///
/// ```text
/// # TOKEN USER — one pair a line, separated by spaces or tabs
/// 3f9c1e0a7b2d4c58  alice      # alice's phone
/// 8d2b6a41c0e97f13  alice      # alice's laptop
/// 5e7a90c3b1f24d86  bob
/// ```
///
/// Blank lines are skipped, and so is everything from a `#` to the end of its line. A user may
/// have several tokens (one per device): all its devices see the same notes. A token names one
/// user only. Tokens and users are case-sensitive and contain no whitespace or `#`.
public struct TokenFile: Sendable {
    /// Token → user.
    public let users: [String: String]

    /// A problem in a token file: the line and what is wrong with it.
    public struct FormatError: Error, CustomStringConvertible {
        /// The file, its line number (from 1), and the problem.
        public let description: String
    }

    /// Reads the token file at `path`.
    /// - Throws: the file's read error; ``FormatError`` for a line that is not `TOKEN USER`, a
    ///   token given twice, or a file with no token at all.
    public init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try self.init(text: text, source: path)
    }

    /// Parses the text of a token file (`source` names it in errors).
    /// - Throws: ``FormatError``, as ``init(path:)``.
    public init(text: String, source: String = "the token file") throws {
        var users: [String: String] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.prefix { $0 != "#" }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if fields.isEmpty { continue }
            let location = "\(source), line \(index + 1)"
            guard fields.count == 2 else {
                throw FormatError(description: "\(location): expected `TOKEN USER`, found \(fields.count) field(s)")
            }
            let token = String(fields[0])
            guard users[token] == nil else { throw FormatError(description: "\(location): the token is given twice") }
            users[token] = String(fields[1])
        }
        guard !users.isEmpty else { throw FormatError(description: "\(source): no token (lines are `TOKEN USER`)") }
        self.users = users
    }

    /// The user `token` authenticates, or nil for an unknown token.
    public func user(for token: String) -> String? { users[token] }
}
