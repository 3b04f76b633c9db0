import Foundation
import Testing
@testable import ActiveObjectsGenerator

/// Tests/ActiveObjectsTests/Generated/RecordStoreModels.swift holds models that
/// activeobjects-gen generated from Tests/Fixtures/record-store.sql, used end to end by
/// GeneratedModelTests. This suite keeps that file honest: it must be exactly the generator's
/// current output, wrapped for the test module by ``wrapForTests(_:namespace:)``.
@Suite struct GeneratedTestModelsTests {
    /// The generator's output as the test module needs it: nested in `enum <namespace>` (the
    /// module has other models with the same names) and subclassing `ModelTestRecord` (each
    /// test's own database) instead of `ActiveObject`. Nothing else changes.
    static func wrapForTests(_ source: String, namespace: String) -> String {
        let lines = source.components(separatedBy: "\n")
        guard let importLine = lines.firstIndex(of: "import ActiveObjects"),
              let foundationLine = lines.firstIndex(of: "import Foundation") else { return "" }
        var header = Array(lines[..<importLine])
        while header.last == "" { header.removeLast() }
        var body = Array(lines[(foundationLine + 1)...])
        while body.first == "" { body.removeFirst() }
        while body.last == "" { body.removeLast() }
        let wrapped = body.map { line -> String in
            line.isEmpty ? "" : "    " + line.replacingOccurrences(of: ": ActiveObject {", with: ": ModelTestRecord {")
        }
        return (header + [
            "//",
            "// Wrapped for the test module (GeneratedTestModelsTests.wrapForTests): the models are nested in",
            "// `enum \(namespace)` and subclass `ModelTestRecord` (the per-test database) instead of",
            "// `ActiveObject`; nothing else differs from the generator's output.",
            "",
            "import Foundation",
            "import Testing",
            "@testable import ActiveObjects",
            "",
            "enum \(namespace) {",
        ] + wrapped + ["}", ""]).joined(separator: "\n")
    }

    static var committedPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("ActiveObjectsTests/Generated/RecordStoreModels.swift").path
    }

    @Test func theRecordStoreModelsAreTheGeneratorsOutput() throws {
        let output = try Generator.generate(schemaAt: Fixture.path("record-store.sql"), options: Generator.Options())
        #expect(output.warnings.isEmpty)
        let committed = try String(contentsOfFile: Self.committedPath, encoding: .utf8)
        let expected = Self.wrapForTests(output.source, namespace: "RecordStore")
        #expect(!expected.isEmpty)
        #expect(committed == expected,
                "regenerate RecordStoreModels.swift: the generator's output changed (write wrapForTests(output) to \(Self.committedPath))")
        // Every table has a model.
        for table in ["labels", "artists", "albums", "tracks", "playlists", "playlist_tracks", "devices", "plays", "album_stats"] {
            #expect(committed.contains("override class var tableName: String { \"\(table)\" }"), "\(table)")
        }
    }
}
