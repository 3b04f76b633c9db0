// TodoServer: `TodoServer [--port N] [--db PATH]`, or the environment variables PORT and
// TODO_DB. Listens on 127.0.0.1 only; stops on SIGINT or SIGTERM.
import Foundation
import Hummingbird
import Logging
import TodoAPI

func option(_ name: String, environment: String) -> String? {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: name), index + 1 < arguments.count {
        return arguments[index + 1]
    }
    return ProcessInfo.processInfo.environment[environment]
}

var configuration = TodoServerConfiguration()
if let text = option("--port", environment: "PORT") {
    guard let port = Int(text), (0...65535).contains(port) else {
        FileHandle.standardError.write(Data("TodoServer: invalid port \(text)\n".utf8))
        exit(64)
    }
    configuration.port = port
}
if let path = option("--db", environment: "TODO_DB") {
    configuration.databasePath = path
}

var logger = Logger(label: "TodoServer")
logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .info

// Migrations run here, on the main thread, before the server accepts anything.
let (application, database) = try buildApplication(configuration, logger: logger) { port in
    // Unbuffered, so that a script reading the output through a pipe sees it at once.
    FileHandle.standardOutput.write(Data("TodoServer listening on http://127.0.0.1:\(port)\n".utf8))
}
try await application.runService()
try database.close()
