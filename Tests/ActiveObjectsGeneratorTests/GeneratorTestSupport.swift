import Foundation
@testable import ActiveObjectsGenerator

/// A fresh folder under the system temporary directory, removed when the value goes away.
final class ScratchDirectory {
    let url: URL

    init(_ function: String = #function) throws {
        let name = "GeneratorTests-\(function.prefix(while: { $0 != "(" }))-\(UUID().uuidString)"
        url = FileManager.default.temporaryDirectory.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to a file in the folder and returns its path.
    func write(_ text: String, to name: String) throws -> String {
        let path = path(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The files under Tests/Fixtures.
enum Fixture {
    static func path(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent(name).path
    }

    static func text(_ name: String) throws -> String {
        try String(contentsOfFile: path(name), encoding: .utf8)
    }
}

/// Runs the command line in-process and captures what it prints.
struct CommandResult {
    var status: Int32
    var standardOutput = ""
    var standardError = ""

    init(_ arguments: [String]) {
        var output = "", error = ""
        status = GeneratorCommand.run(arguments, standardOutput: { output += $0 }, standardError: { error += $0 })
        standardOutput = output
        standardError = error
    }
}
