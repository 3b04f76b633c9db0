// SyncServer: `SyncServer --db PATH --tokens PATH [--port N] [--host H]`, or the environment
// variables SYNC_DB, SYNC_TOKENS and PORT (an option wins over its variable). Listens on
// 127.0.0.1 unless --host says otherwise; prints `listening on HOST:PORT` once it accepts
// connections; stops gracefully on SIGINT or SIGTERM, then closes the database.
//
// `SyncServer dump --db PATH --user USER` prints the notes the hub at PATH holds for USER, one
// canonical line per note (NoteRows), sorted by uuid: what every synchronized device of the
// user holds, in the format of `notes-device --dump`.
import ActiveObjects
import Foundation
import Hummingbird
import Logging
import NoteRows
import Notes
import SyncAPI

let usage = """
    usage: SyncServer --db PATH --tokens PATH [--port N] [--host ADDRESS]
           SyncServer dump --db PATH --user USER
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("SyncServer: \(message)\n\(usage)\n".utf8))
    exit(64)
}

func say(_ line: String) {
    // Unbuffered, so that a script reading the output through a pipe sees each line at once.
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The value of `--name VALUE`, else of the environment variable; nil when neither is given
/// (an empty value counts as not given).
func option(_ name: String, environment: String? = nil) -> String? {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: name) {
        guard index + 1 < arguments.count, !arguments[index + 1].isEmpty else { fail("\(name) needs a value") }
        return arguments[index + 1]
    }
    return environment.flatMap { ProcessInfo.processInfo.environment[$0] }.flatMap { $0.isEmpty ? nil : $0 }
}

if CommandLine.arguments.dropFirst().first == "dump" {
    guard let path = option("--db", environment: "SYNC_DB") else { fail("dump needs --db PATH") }
    guard let user = option("--user") else { fail("dump needs --user USER") }
    guard FileManager.default.fileExists(atPath: path) else { fail("no database at \(path)") }
    let (database, hub) = try SyncServerDatabase.open(path: path)
    let rows = try await hub.rows(of: Note.self, user: user)
    for line in NoteRows.lines(rows, keyColumn: Note.primaryKey) { say(line) }
    try database.close()
    exit(0)
}

for argument in CommandLine.arguments.dropFirst() where argument.hasPrefix("-") {
    guard ["--db", "--tokens", "--port", "--host", "-h", "--help"].contains(argument) else { fail("unknown option \(argument)") }
}
if CommandLine.arguments.contains("-h") || CommandLine.arguments.contains("--help") {
    say(usage)
    exit(0)
}
var port = 8080
if let text = option("--port", environment: "PORT") {
    guard let value = Int(text), (0...65535).contains(value) else { fail("invalid port \(text)") }
    port = value
}
guard let databasePath = option("--db", environment: "SYNC_DB") else { fail("give the hub's database with --db PATH or SYNC_DB") }
guard let tokensPath = option("--tokens", environment: "SYNC_TOKENS") else {
    fail("give the token file with --tokens PATH or SYNC_TOKENS (lines `TOKEN USER`)")
}
let host = option("--host") ?? "127.0.0.1"
let configuration = SyncServerConfiguration(host: host, port: port, databasePath: databasePath, tokensPath: tokensPath)

var logger = Logger(label: "SyncServer")
logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .info

/// Builds the application, serves until SIGTERM or SIGINT (Hummingbird's graceful shutdown:
/// requests in progress finish), then closes the hub's database.
@MainActor
func serve() async throws {
    let (application, database) = try buildApplication(configuration, logger: logger) { [host] port in
        say("listening on \(host):\(port)")
    }
    say("SyncServer database: \(URL(fileURLWithPath: databasePath).standardizedFileURL.path)")
    try await application.runService()
    try database.close()
    say("SyncServer stopped; database closed")
}

do {
    try await serve()
} catch {
    FileHandle.standardError.write(Data("SyncServer: \(error)\n".utf8))
    exit(1)
}
