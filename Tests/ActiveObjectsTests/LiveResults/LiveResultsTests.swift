import Foundation
import Observation
import Testing
@testable import ActiveObjects

/// `Query.liveResults()`: the main-actor, observable form (§17). In the serialized suite of
/// `LiveChangesTests` (the models share one database at a time).
extension LiveChangesTests {
    @Test func liveResultsLoadThenUpdateTheSameObjectsOnTheMainActor() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            try addItem("b", score: 2)
            let results = LiveItem.all.order(by: \.$score).liveResults()
            #expect(!results.isLoaded && results.elements.isEmpty && results.error == nil)
            #expect(await eventually { results.isLoaded })
            #expect(results.elements.map(\.name) == ["a", "b"])
            let a = results.elements[0]

            // Observers of an object and of the elements, told on the main actor.
            let key = DispatchSpecificKey<Bool>()
            DispatchQueue.main.setSpecific(key: key, value: true)
            defer { DispatchQueue.main.setSpecific(key: key, value: nil) }
            let told = LockedBox<[String]>([])
            withObservationTracking { _ = a.name } onChange: {
                told.set(told.value + ["name on main: \(DispatchQueue.getSpecific(key: key) == true)"])
            }
            withObservationTracking { _ = a.score } onChange: { told.set(told.value + ["score"]) }

            // Another object of the same row, saved elsewhere: the live object follows.
            let copy = try #require(try await LiveItem.find(id: a.id!))
            #expect(copy !== a)
            copy.name = "A"
            try await copy.save()
            #expect(await eventually { a.name == "A" })
            #expect(results.elements[0] === a)
            #expect(told.value == ["name on main: true"])

            let elementsChanged = LockedBox(false)
            withObservationTracking { _ = results.elements } onChange: { elementsChanged.set(true) }
            try await db.execute("INSERT INTO live_item (name, score, shown, memo) VALUES ('c', 0, 1, '')")
            #expect(await eventually { results.elements.count == 3 })
            #expect(elementsChanged.value)
            #expect(results.elements.map(\.name) == ["c", "A", "b"])
            #expect(results.elements[1] === a)
        }
    }

    @Test func cancelAndDeallocationStopFollowing() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            let results = LiveItem.all.liveResults()
            #expect(await eventually { results.isLoaded })
            #expect(db.observations.count == 1)
            results.cancel()
            #expect(await eventually { db.observations.count == 0 })
            try addItem("b", score: 2)
            try await Task.sleep(nanoseconds: 50_000_000)
            #expect(results.elements.map(\.name) == ["a"])
            #expect(results.error == nil)

            var dropped: LiveResults<LiveItem>? = LiveItem.all.liveResults()
            #expect(await eventually { dropped?.isLoaded == true })
            #expect(db.observations.count == 1)
            weak let watched = dropped
            dropped = nil
            #expect(watched == nil)
            #expect(await eventually { db.observations.count == 0 })
        }
    }

    @Test func liveResultsReportWhyTheyStopped() async throws {
        try await withLiveResultsDB { db, _ in
            let failing = LiveItem.where("no_such_column = 1").liveResults()
            #expect(await eventually { failing.error != nil })
            #expect(failing.error is DatabaseError)
            #expect(!failing.isLoaded)

            let closing = LiveItem.all.liveResults()
            #expect(await eventually { closing.isLoaded })
            try db.close()
            #expect(await eventually { closing.error != nil })
            #expect(closing.error as? ActiveObjectError == .databaseClosed)
        }
    }
}
