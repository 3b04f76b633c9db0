import Foundation
import Testing
@testable import ActiveObjects

struct JSONEvent: Codable, Equatable {
    var name: String
    var at: Date
    var until: Date?
}

/// `@JSONColumn` values that contain dates store them with the model's `DateStrategy`, like a
/// `Date` column (item 9 of the hardening issue).
@Suite struct JSONColumnTests {
    final class Agenda: ModelTestRecord {
        @Column var title = ""
        @JSONColumn var events: [JSONEvent] = []
        @JSONColumn var when: Date? = nil
    }

    final class LegacyAgenda: ModelTestRecord {
        override class var tableName: String { "legacy_agenda" }
        override class var dateStrategy: DateStrategy? { .unixMilliseconds }
        @JSONColumn var events: [JSONEvent] = []
    }

    static let moment = Date(timeIntervalSince1970: 1_411_467_072.25)

    @Test func datesInsideJSONUseTheDatabasesStrategy() throws {
        try withModelDB { db in
            try Agenda.createTable()
            let agenda = Agenda()
            agenda.events = [JSONEvent(name: "launch", at: Self.moment, until: nil)]
            agenda.when = Self.moment
            try agenda.save()
            let stored: String? = try db.scalar("SELECT events FROM agenda")
            #expect(stored == #"[{"at":"2014-09-23 10:11:12.250","name":"launch"}]"#)
            let when: String? = try db.scalar("SELECT \"when\" FROM agenda")
            #expect(when == #""2014-09-23 10:11:12.250""#)
            // The same text a Date column holds: SQLite's date functions understand it.
            let year: String? = try db.scalar("SELECT strftime('%Y', json_extract(events, '$[0].at')) FROM agenda")
            #expect(year == "2014")

            let loaded = try #require(try Agenda.findAll().first)
            #expect(loaded.events == agenda.events)
            #expect(loaded.when == Self.moment)
        }
    }

    @Test func datesInsideJSONUseTheModelsStrategy() throws {
        try withModelDB { db in
            try LegacyAgenda.createTable()
            let agenda = LegacyAgenda()
            agenda.events = [JSONEvent(name: "x", at: Self.moment, until: Date(timeIntervalSince1970: 0))]
            try agenda.save()
            let stored: String? = try db.scalar("SELECT events FROM legacy_agenda")
            #expect(stored == #"[{"at":1411467072250,"name":"x","until":0}]"#)
            #expect(try LegacyAgenda.findAll().first?.events == agenda.events)
        }
    }

    @Test func everyDateFormADateColumnReadsIsReadInsideJSON() throws {
        try withModelDB { db in
            try Agenda.createTable()
            try db.execute("""
                INSERT INTO agenda (title, events) VALUES ('forms', '[
                  {"name": "t", "at": "2014-09-23T10:11:12Z"},
                  {"name": "offset", "at": "2014-09-23T12:11:12+02:00"},
                  {"name": "compact", "at": "20140923101112"},
                  {"name": "seconds", "at": 1411467072}
                ]')
                """)
            let events = try #require(try Agenda.findAll().first).events
            let expected = Date(timeIntervalSince1970: 1_411_467_072)
            #expect(events.map(\.at) == [expected, expected, expected, expected])
        }
    }

    @Test func jsonThatIsNotADateIsATypeMismatch() throws {
        try withModelDB { db in
            try Agenda.createTable()
            try db.execute(#"INSERT INTO agenda (title, events) VALUES ('bad', '[{"name": "n", "at": "not a date"}]')"#)
            let error = expectActiveObjectError { _ = try Agenda.findAll() }
            #expect(error?.typeMismatchFields?.column == "events")
        }
    }
}
