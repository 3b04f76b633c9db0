import Foundation
import Testing
@testable import ActiveObjects

/// A model subclass isolated to the main actor. Swift accepts it (models are not `Sendable`,
/// so each object stays in one isolation domain); the library reads and writes its columns
/// within the calls made by the code that holds the object. README "Swift concurrency".
@MainActor final class MainActorNote: ModelTestRecord {
    @Column var text = ""
    @Column var pinned = false
}

@Suite struct MainActorModelTests {
    @MainActor @Test func aMainActorModelWorksFromTheMainActor() throws {
        let database = try Database.inMemory()
        try ModelTestDB.$current.withValue(database) {
            try MainActorNote.createTable()
            let note = MainActorNote()
            note.text = "hello"
            try note.save()
            note.pinned = true
            #expect(note.changedColumns == ["pinned"])
            try note.save()
            let loaded = try MainActorNote.findAll()
            #expect(loaded.map(\.text) == ["hello"])
            #expect(loaded.map(\.pinned) == [true])
            #expect(try ModelSchema.of(MainActorNote.self).columns.map(\.name) == ["text", "pinned"])
        }
    }
}
