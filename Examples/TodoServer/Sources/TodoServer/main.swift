// TodoServer: `TodoServer [--port N] [--db PATH]`, or the environment variables PORT and
// TODO_DB (an option wins over its variable). Listens on 127.0.0.1 only; stops on SIGINT or
// SIGTERM.
//
// The database: the file given by --db or TODO_DB (created if missing, in a folder that
// exists); with neither, `TodoServer/todos.sqlite` in the user's data folder ($XDG_DATA_HOME,
// else ~/.local/share, on Linux; ~/Library/Application Support on macOS), or `todos.sqlite` in
// the system's temporary folder when that cannot be had — never the current directory. The
// path in use is printed at startup (`TodoServer database: PATH`).
import Foundation
import Hummingbird
import Logging
import TodoAPI

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("TodoServer: \(message)\nusage: TodoServer [--port N] [--db PATH]\n".utf8))
    exit(64)
}

/// The value of `--name VALUE`, else of the environment variable; nil when neither is given
/// (an empty value counts as not given).
func option(_ name: String, environment: String) -> String? {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: name) {
        guard index + 1 < arguments.count, !arguments[index + 1].isEmpty else { fail("\(name) needs a value") }
        return arguments[index + 1]
    }
    return ProcessInfo.processInfo.environment[environment].flatMap { $0.isEmpty ? nil : $0 }
}

var port = 8080
if let text = option("--port", environment: "PORT") {
    guard let value = Int(text), (0...65535).contains(value) else { fail("invalid port \(text)") }
    port = value
}
let databasePath = option("--db", environment: "TODO_DB") ?? TodoServerConfiguration.defaultDatabasePath()
let configuration = TodoServerConfiguration(port: port, databasePath: databasePath)

var logger = Logger(label: "TodoServer")
logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .info

// Unbuffered writes, so that a script reading the output through a pipe sees each line at once.
// A relative path is shown as the absolute path it names (SQLite's `:memory:` and `file:` URIs as given).
let isPlainPath = databasePath != ":memory:" && !databasePath.hasPrefix("file:")
let shownPath = isPlainPath ? URL(fileURLWithPath: databasePath).standardizedFileURL.path : databasePath
FileHandle.standardOutput.write(Data("TodoServer database: \(shownPath)\n".utf8))

// Migrations run here, on the main thread, before the server accepts anything.
let (application, database) = try buildApplication(configuration, logger: logger) { port in
    FileHandle.standardOutput.write(Data("TodoServer listening on http://127.0.0.1:\(port)\n".utf8))
}
try await application.runService()
try database.close()
