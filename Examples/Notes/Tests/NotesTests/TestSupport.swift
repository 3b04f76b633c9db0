import ActiveObjects
import Foundation
import Testing

/// A fresh notes file in the temporary folder, migrated and made the default database;
/// removed (with its WAL files) by ``remove()``.
struct TemporaryNotesFile {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("notes-tests-\(UUID().uuidString).sqlite").path
    }

    func remove() {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Waits, on the main actor, until `condition` holds; throws `TimedOut` after `timeout`.
/// Polls: the view model changes on the main actor, between these sleeps.
@MainActor
func waitUntil(
    _ what: String,
    timeout: Duration = .seconds(10),
    _ condition: @MainActor () -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !condition() {
        guard clock.now < deadline else { throw TimedOut(what: what) }
        try await Task.sleep(for: .milliseconds(2))
    }
}
