import ActiveObjects
import Foundation
import Testing
@testable import Notes

/// The model on its own: validation needs no database.
struct NoteTests {
    @Test func validationNamesTheTitle() throws {
        let note = Note()
        for bad in ["", "  \n\t", String(repeating: "é", count: Note.maximumTitleLength + 1)] {
            note.title = bad
            #expect(throws: ValidationError.self) { try note.validate() }
        }
        note.title = String(repeating: "é", count: Note.maximumTitleLength)
        try note.validate()
    }

    @Test func columnsAreSnakeCaseInSQL() throws {
        let db = try Database.inMemory()
        try Note.createTable(in: db)
        let columns: [String] = try db.rows("SELECT name FROM pragma_table_info('note') ORDER BY cid").map { try $0["name"] }
        #expect(columns == ["uuid", "title", "body", "pinned", "created_at", "updated_at"])
    }
}
