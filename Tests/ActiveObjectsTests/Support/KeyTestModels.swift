import Foundation
import Testing
@testable import ActiveObjects

// The schemas of the key suites (NaturalKeyTests, CompositeKeyTests, WithoutRowIDTests,
// KeylessTableTests, KeyedRelationTests, ManyToManyTests, KeyedSchemaEvolutionTests), written
// as an app would: a shop whose customers have TEXT codes, orders whose lines have the
// composite key (order_id, product_id), payments keyed by the UUID a payment server gave them,
// stock kept WITHOUT ROWID, warehouses numbered by hand, a keyless audit log; and a music
// library with artists, albums, tracks, playlists and the playlist_track join table, plus
// tags keyed by their name and joined to tracks by track_tags.

// MARK: - The shop

/// A TEXT natural key: `code` ("ALFKI") is the primary key, `id` is the rowid.
final class ShopCustomer: ModelTestRecord {
    override class var tableName: String { "customers" }
    override class var primaryKey: String { "code" }
    @Column var code: String = ""
    @Column var name: String = ""
    @Column(unique: true) var email: String? = nil
    @Column var country: String = "FR"
    var orders: HasMany<ShopOrder> { hasMany(\.$customerCode) }
    var profile: HasOne<ShopCustomerProfile> { hasOne(\.$customerCode) }
    var giftCards: HasMany<ShopGiftCard> { hasMany(\.$customerCode) }

    override func validate() throws {
        if code.isEmpty { throw ValidationError("code", "must not be empty") }
    }
}

/// One-to-one: the key is also the (non-optional, TEXT) foreign key.
final class ShopCustomerProfile: ModelTestRecord {
    override class var tableName: String { "customer_profiles" }
    override class var primaryKey: String { "customer_code" }
    @Column("customer_code", references: ShopCustomer.self, onDelete: .cascade) var customerCode: String = ""
    @Column var newsletter: Bool = false
    var customer: BelongsTo<ShopCustomer> { belongsTo(\.$customerCode) }
}

/// A table named with a space, a TEXT key named with a space, an optional TEXT foreign key.
final class ShopGiftCard: ModelTestRecord {
    override class var tableName: String { "Gift Cards" }
    override class var primaryKey: String { "Card Number" }
    @Column("Card Number") var number: String = ""
    @Column("Value Cents") var valueCents: Int = 0
    @Column("Customer Code", references: ShopCustomer.self, onDelete: .setNull) var customerCode: String? = nil
    var customer: BelongsTo<ShopCustomer> { belongsTo(\.$customerCode) }
}

/// A round-1 model: `id` is the INTEGER PRIMARY KEY.
final class ShopProduct: ModelTestRecord {
    override class var tableName: String { "products" }
    @Column(unique: true) var sku: String = ""
    @Column var name: String = ""
    @Column var priceCents: Int = 0
    var lines: HasMany<ShopOrderLine> { hasMany(\.$productId) }
}

/// A rowid model pointing at a TEXT key (optional: an order may be anonymous).
final class ShopOrder: ModelTestRecord {
    override class var tableName: String { "orders" }
    @Column("customer_code", references: ShopCustomer.self, onDelete: .restrict) var customerCode: String? = nil
    @Column var status: String = "open"
    var customer: BelongsTo<ShopCustomer> { belongsTo(\.$customerCode) }
    var lines: HasMany<ShopOrderLine> { hasMany(\.$orderId) }
    var payments: HasMany<ShopPayment> { hasMany(\.$orderId) }
}

/// A composite key (order_id, product_id) with a payload.
final class ShopOrderLine: ModelTestRecord {
    override class var tableName: String { "order_lines" }
    override class var primaryKeys: [String] { ["order_id", "product_id"] }
    @Column("order_id", references: ShopOrder.self, onDelete: .cascade) var orderId: Int64 = 0
    @Column("product_id", references: ShopProduct.self) var productId: Int64 = 0
    @Column var quantity: Int = 1
    @Column("unit_price_cents") var unitPriceCents: Int = 0
    var order: BelongsTo<ShopOrder> { belongsTo(\.$orderId) }
    var product: BelongsTo<ShopProduct> { belongsTo(\.$productId) }
}

/// A UUID natural key, under the column name `payment_id`.
final class ShopPayment: ModelTestRecord {
    override class var tableName: String { "payments" }
    override class var primaryKey: String { "payment_id" }
    @Column("payment_id") var paymentId: UUID = UUID()
    @Column("order_id", references: ShopOrder.self) var orderId: Int64 = 0
    @Column var amountCents: Int = 0
    var order: BelongsTo<ShopOrder> { belongsTo(\.$orderId) }
    var refunds: HasMany<ShopRefund> { hasMany(\.$paymentId) }
    var receipt: HasOne<ShopReceipt> { hasOne(\.$paymentId) }
}

/// An optional UUID foreign key.
final class ShopRefund: ModelTestRecord {
    override class var tableName: String { "refunds" }
    @Column("payment_id", references: ShopPayment.self, onDelete: .cascade) var paymentId: UUID? = nil
    @Column var reason: String = ""
    var payment: BelongsTo<ShopPayment> { belongsTo(\.$paymentId) }
}

/// A non-optional UUID foreign key (has-one from the payment).
final class ShopReceipt: ModelTestRecord {
    override class var tableName: String { "receipts" }
    @Column("payment_id", references: ShopPayment.self, onDelete: .cascade) var paymentId: UUID = UUID()
    @Column var text: String = ""
}

/// WITHOUT ROWID, declared by the model: rows have no `id`.
final class ShopStock: ModelTestRecord {
    override class var tableName: String { "stock" }
    override class var primaryKey: String { "sku" }
    override class var withoutRowID: Bool { true }
    @Column var sku: String = ""
    @Column("on_hand") var onHand: Int = 0
}

/// An integer natural key numbered by hand (not an `id`): `PRIMARY KEY ("number")`.
final class ShopWarehouse: ModelTestRecord {
    override class var tableName: String { "warehouses" }
    override class var primaryKey: String { "number" }
    @Column var number: Int = 0
    @Column var city: String = ""
}

/// A table without a declared key, mapped by its rowid.
final class ShopAuditLog: ModelTestRecord {
    override class var tableName: String { "audit_log" }
    override class var primaryKey: String { "rowid" }
    @Column var at: Date = Date(timeIntervalSince1970: 0)
    @Column var actor: String? = nil
    @Column var action: String = ""
}

enum Shop {
    /// Every shop model, parents first.
    static func createTables() throws {
        try ShopCustomer.createTable()
        try ShopCustomerProfile.createTable()
        try ShopGiftCard.createTable()
        try ShopProduct.createTable()
        try ShopOrder.createTable()
        try ShopOrderLine.createTable()
        try ShopPayment.createTable()
        try ShopRefund.createTable()
        try ShopReceipt.createTable()
        try ShopStock.createTable()
        try ShopWarehouse.createTable()
        try ShopAuditLog.createTable()
    }

    @discardableResult
    static func customer(_ code: String, _ name: String, email: String? = nil) throws -> ShopCustomer {
        let customer = ShopCustomer()
        customer.code = code
        customer.name = name
        customer.email = email
        try customer.save()
        return customer
    }

    @discardableResult
    static func product(_ sku: String, _ name: String, cents: Int) throws -> ShopProduct {
        let product = ShopProduct()
        product.sku = sku
        product.name = name
        product.priceCents = cents
        try product.save()
        return product
    }

    @discardableResult
    static func order(for customer: String?, status: String = "open") throws -> ShopOrder {
        let order = ShopOrder()
        order.customerCode = customer
        order.status = status
        try order.save()
        return order
    }

    @discardableResult
    static func line(_ order: ShopOrder, _ product: ShopProduct, quantity: Int) throws -> ShopOrderLine {
        let line = ShopOrderLine()
        line.orderId = try requireID(order)
        line.productId = try requireID(product)
        line.quantity = quantity
        line.unitPriceCents = product.priceCents
        try line.save()
        return line
    }
}

// MARK: - The music library

final class MusicArtist: ModelTestRecord {
    override class var tableName: String { "artists" }
    @Column var name: String = ""
    var albums: HasMany<MusicAlbum> { hasMany(\.$artistId) }
}

/// A non-optional Int64 foreign key.
final class MusicAlbum: ModelTestRecord {
    override class var tableName: String { "albums" }
    @Column("artist_id", references: MusicArtist.self, onDelete: .cascade) var artistId: Int64 = 0
    @Column var title: String = ""
    var artist: BelongsTo<MusicArtist> { belongsTo(\.$artistId) }
    var tracks: HasMany<MusicTrack> { hasMany(\.$albumId) }
}

/// An optional Int64 foreign key; both sides of two many-to-many relations.
final class MusicTrack: ModelTestRecord {
    override class var tableName: String { "tracks" }
    @Column("album_id", references: MusicAlbum.self, onDelete: .setNull) var albumId: Int64? = nil
    @Column var title: String = ""
    @Column var seconds: Int = 0
    var album: BelongsTo<MusicAlbum> { belongsTo(\.$albumId) }
    var playlists: HasManyThrough<MusicPlaylist> { hasMany(through: \MusicPlaylistTrack.$trackId, \MusicPlaylistTrack.$playlistId) }
    var tags: HasManyThrough<MusicTag> { hasMany(through: \MusicTrackTag.$trackId, \MusicTrackTag.$tagName) }

    override func validate() throws {
        if title.isEmpty { throw ValidationError("title", "must not be empty") }
    }
}

final class MusicPlaylist: ModelTestRecord {
    override class var tableName: String { "playlists" }
    @Column var name: String = ""
    var tracks: HasManyThrough<MusicTrack> { hasMany(through: \MusicPlaylistTrack.$playlistId, \MusicPlaylistTrack.$trackId) }
    var entries: HasMany<MusicPlaylistTrack> { hasMany(\.$playlistId) }
}

/// The pure join table: composite key (playlist_id, track_id), nothing else.
final class MusicPlaylistTrack: ModelTestRecord {
    override class var tableName: String { "playlist_track" }
    override class var primaryKeys: [String] { ["playlist_id", "track_id"] }
    @Column("playlist_id", references: MusicPlaylist.self, onDelete: .cascade) var playlistId: Int64 = 0
    @Column("track_id", references: MusicTrack.self, onDelete: .cascade) var trackId: Int64 = 0
}

/// A TEXT natural key.
final class MusicTag: ModelTestRecord {
    override class var tableName: String { "tags" }
    override class var primaryKey: String { "name" }
    @Column var name: String = ""
    var tracks: HasManyThrough<MusicTrack> { hasMany(through: \MusicTrackTag.$tagName, \MusicTrackTag.$trackId) }
}

/// A join table over an Int64 key and a TEXT key, WITHOUT ROWID.
final class MusicTrackTag: ModelTestRecord {
    override class var tableName: String { "track_tags" }
    override class var primaryKeys: [String] { ["track_id", "tag_name"] }
    override class var withoutRowID: Bool { true }
    @Column("track_id", references: MusicTrack.self, onDelete: .cascade) var trackId: Int64 = 0
    @Column("tag_name", references: MusicTag.self, onDelete: .cascade) var tagName: String = ""
}

enum Music {
    static func createTables() throws {
        try MusicArtist.createTable()
        try MusicAlbum.createTable()
        try MusicTrack.createTable()
        try MusicPlaylist.createTable()
        try MusicPlaylistTrack.createTable()
        try MusicTag.createTable()
        try MusicTrackTag.createTable()
    }

    @discardableResult
    static func track(_ title: String, seconds: Int = 200, album: MusicAlbum? = nil) throws -> MusicTrack {
        let track = MusicTrack()
        track.title = title
        track.seconds = seconds
        track.albumId = album?.id
        try track.save()
        return track
    }

    @discardableResult
    static func playlist(_ name: String) throws -> MusicPlaylist {
        let playlist = MusicPlaylist()
        playlist.name = name
        try playlist.save()
        return playlist
    }
}

// MARK: - Helpers

/// The `CREATE TABLE` statement SQLite stored for `table`.
func storedTableSQL(_ db: Database, _ table: String) throws -> String {
    try db.scalar("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table]) ?? ""
}

/// Whether SQLite says `table` is a `WITHOUT ROWID` table.
func isWithoutRowID(_ db: Database, _ table: String) throws -> Bool {
    let flag: Int? = try db.scalar("SELECT wr FROM pragma_table_list WHERE name = ? AND schema = 'main'", [table])
    return flag == 1
}

/// The primary-key columns of `table`, in key order (PRAGMA table_info's `pk`).
func storedKeyColumns(_ db: Database, _ table: String) throws -> [String] {
    try db.rows("SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", [table]).map { try $0["name"] as String }
}

/// The SELECT statements among `statements`, leaving out the library's one-time look-ups of a
/// table's layout (`pragma_table_list`, `pragma_table_info`).
func selectStatements(_ statements: [String]) -> [String] {
    statements.filter { $0.uppercased().hasPrefix("SELECT") && !$0.lowercased().contains("pragma_") }
}

/// The statements that write (INSERT, UPDATE, DELETE) among `statements`.
func writeStatements(_ statements: [String]) -> [String] {
    statements.filter {
        let upper = $0.uppercased()
        return upper.hasPrefix("INSERT") || upper.hasPrefix("UPDATE") || upper.hasPrefix("DELETE")
    }
}
