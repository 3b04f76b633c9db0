// The models of the tour.
import ActiveObjects
import Foundation

final class Group: ActiveObject {
    @Column var name = ""
    var people: HasMany<Person> { hasMany(\.$groupId) }
}

enum Mood: String { case happy, grumpy }
extension Mood: ColumnValue {}

final class Person: ActiveObject {
    @Column var name: String = ""
    @Column(indexed: true) var age: Int = 0
    @Column var income: Double = 0
    @Column var active: Bool = true
    @Column var rating: Double? = nil
    @Column var birthdate: Date? = nil
    @Column("photo_data") var photo: Data? = nil
    @Column var mood: Mood = .happy
    @JSONColumn var tags: [String] = []
    @Column(references: Group.self, onDelete: .setNull) var groupId: Int64? = nil
    var scratch = 0   // not a column

    var group: BelongsTo<Group> { belongsTo(\.$groupId) }

    override func validate() throws {
        if name.isEmpty { throw ValidationError("name", "must not be empty") }
        if age < 0 { throw ValidationError("age", "must not be negative") }
    }
}

// Keys of any type: customers keyed by a TEXT code, orders pointing at them.
final class Customer: ActiveObject {
    override class var primaryKey: String { "code" }
    @Column var code = ""
    @Column var country = ""
    var orders: HasMany<Order> { hasMany(\.$customerCode) }
}

final class Order: ActiveObject {
    @Column(references: Customer.self) var customerCode: String? = nil
    @Column var freight: Decimal = 0
    @Column var shipCity: String? = nil
    var customer: BelongsTo<Customer> { belongsTo(\.$customerCode) }
}

// Many-to-many: playlists and tracks through a join model with a composite key.
final class Track: ActiveObject {
    @Column var title = ""
    @Column var seconds = 0
}

final class Playlist: ActiveObject {
    @Column var name = ""
    var tracks: HasManyThrough<Track> { hasMany(through: \PlaylistTrack.$playlistId, \PlaylistTrack.$trackId) }
}

final class PlaylistTrack: ActiveObject {
    override class var primaryKeys: [String] { ["playlistId", "trackId"] }
    @Column(references: Playlist.self, onDelete: .cascade) var playlistId: Int64 = 0
    @Column(references: Track.self, onDelete: .cascade) var trackId: Int64 = 0
}

/// Collects the SQL the trace hook reports — in a second, in-memory database: a `Database` is
/// `Sendable`, so the trace closure may use it from whatever thread runs a statement, with no
/// lock of our own (and no `@unchecked Sendable`).
final class SQLLog: Sendable {
    private let store: Database

    init() throws {
        store = try Database.inMemory()
        try store.execute("CREATE TABLE line (sql TEXT NOT NULL)")
    }

    func append(_ sql: String) {
        try? store.execute("INSERT INTO line (sql) VALUES (?)", [sql])
    }

    /// The statements logged since the last call, in order.
    func take() throws -> [String] {
        try store.transaction {
            let lines: [String] = try store.rows("SELECT sql FROM line ORDER BY rowid").map { try $0[0] }
            try store.execute("DELETE FROM line")
            return lines
        }
    }
}
