import Foundation
import Testing
@testable import ActiveObjects

// A realistic dataset for the queries across relations, grouping and batch writes: a shop in
// the shape of Northwind (customers with TEXT codes, orders, order lines with a composite key,
// employees reporting to employees) and a music library with a many-to-many relation. Every
// test computes its expected results in Swift from `findAll()` of these models.

final class ShopCustomer: ModelTestRecord {
    override class var tableName: String { "Customers" }
    override class var primaryKey: String { "CustomerID" }
    @Column("CustomerID") var code: String = ""
    @Column("CompanyName") var companyName: String = ""
    @Column("Country") var country: String? = nil
    @Column("CreditLimit") var creditLimit: Decimal = 0
    var orders: HasMany<ShopOrder> { hasMany(\.$customerId) }
    var profile: HasOne<ShopProfile> { hasOne(\.$customerCode) }
}

final class ShopProfile: ModelTestRecord {
    override class var tableName: String { "CustomerProfiles" }
    @Column(references: ShopCustomer.self, onDelete: .cascade) var customerCode: String = ""
    @Column var vip: Bool = false
    @Column var segment: String? = nil
    var customer: BelongsTo<ShopCustomer> { belongsTo(\.$customerCode) }
}

final class ShopEmployee: ModelTestRecord {
    override class var tableName: String { "Employees" }
    override class var primaryKey: String { "EmployeeID" }
    @Column("LastName") var lastName: String = ""
    @Column("Title") var title: String? = nil
    @Column("ReportsTo", references: ShopEmployee.self) var reportsTo: Int64? = nil
    var manager: BelongsTo<ShopEmployee> { belongsTo(\.$reportsTo) }
    var reports: HasMany<ShopEmployee> { hasMany(\.$reportsTo) }
    var orders: HasMany<ShopOrder> { hasMany(\.$employeeId) }
}

final class ShopOrder: ModelTestRecord {
    override class var tableName: String { "Orders" }
    override class var primaryKey: String { "OrderID" }
    @Column("CustomerID", references: ShopCustomer.self) var customerId: String? = nil
    @Column("EmployeeID", references: ShopEmployee.self) var employeeId: Int64? = nil
    @Column("OrderDate") var orderDate: Date = Date(timeIntervalSince1970: 0)
    @Column("Freight") var freight: Decimal? = nil
    @Column("ShipCity") var shipCity: String? = nil
    @Column("ShipCountry") var shipCountry: String? = nil
    @Column("Priority") var priority: Int = 0
    @Column("Weight") var weight: Double? = nil
    @Column("Shipped") var shipped: Bool = false
    var customer: BelongsTo<ShopCustomer> { belongsTo(\.$customerId) }
    var employee: BelongsTo<ShopEmployee> { belongsTo(\.$employeeId) }
    var lines: HasMany<ShopLine> { hasMany(\.$orderId) }
}

final class ShopLine: ModelTestRecord {
    override class var tableName: String { "Order Details" }
    override class var primaryKeys: [String] { ["OrderID", "ProductID"] }
    @Column("OrderID", references: ShopOrder.self, onDelete: .cascade) var orderId: Int64 = 0
    @Column("ProductID") var productId: Int64 = 0
    @Column("UnitPrice") var unitPrice: Decimal = 0
    @Column("Quantity") var quantity: Int = 0
    @Column("Discount") var discount: Double = 0
    var order: BelongsTo<ShopOrder> { belongsTo(\.$orderId) }
}

final class MusicArtist: ModelTestRecord {
    @Column var name: String = ""
    var tracks: HasMany<MusicTrack> { hasMany(\.$artistId) }
}

final class MusicTrack: ModelTestRecord {
    @Column var title: String = ""
    @Column(references: MusicArtist.self) var artistId: Int64? = nil
    @Column var genre: String? = nil
    @Column var seconds: Int = 0
    @Column var price: Decimal = 0
    var artist: BelongsTo<MusicArtist> { belongsTo(\.$artistId) }
    var playlists: HasManyThrough<MusicPlaylist> { hasMany(through: \MusicPlaylistTrack.$trackId, \MusicPlaylistTrack.$playlistId) }
}

final class MusicPlaylist: ModelTestRecord {
    @Column var name: String = ""
    var tracks: HasManyThrough<MusicTrack> { hasMany(through: \MusicPlaylistTrack.$playlistId, \MusicPlaylistTrack.$trackId) }
}

final class MusicPlaylistTrack: ModelTestRecord {
    override class var primaryKeys: [String] { ["playlistId", "trackId"] }
    override class var withoutRowID: Bool { true }
    @Column(references: MusicPlaylist.self, onDelete: .cascade) var playlistId: Int64 = 0
    @Column(references: MusicTrack.self, onDelete: .cascade) var trackId: Int64 = 0
    @Column var position: Int = 0
}

/// Everything the shop holds, read back with `findAll()`.
struct ShopSnapshot {
    var customers: [ShopCustomer]
    var profiles: [ShopProfile]
    var employees: [ShopEmployee]
    var orders: [ShopOrder]
    var lines: [ShopLine]

    init() throws {
        customers = try ShopCustomer.findAll()
        profiles = try ShopProfile.findAll()
        employees = try ShopEmployee.findAll()
        orders = try ShopOrder.findAll()
        lines = try ShopLine.findAll()
    }

    func customer(_ code: String?) -> ShopCustomer? { customers.first { $0.code == code } }
    func orders(of customer: ShopCustomer) -> [ShopOrder] { orders.filter { $0.customerId == customer.code } }
    func lines(of order: ShopOrder) -> [ShopLine] { lines.filter { $0.orderId == order.id } }
}

/// The music library, read back with `findAll()`.
struct MusicSnapshot {
    var artists: [MusicArtist]
    var tracks: [MusicTrack]
    var playlists: [MusicPlaylist]
    var entries: [MusicPlaylistTrack]

    init() throws {
        artists = try MusicArtist.findAll()
        tracks = try MusicTrack.findAll()
        playlists = try MusicPlaylist.findAll()
        // Not findAll(): it orders a WITHOUT ROWID table by "rowid" (reported to the lead).
        entries = try MusicPlaylistTrack.all.order(by: \.$playlistId).order(by: \.$trackId).all()
    }

    func tracks(of playlist: MusicPlaylist) -> [MusicTrack] {
        let ids = Set(entries.filter { $0.playlistId == playlist.id }.map(\.trackId))
        return tracks.filter { ids.contains($0.id!) }
    }
}

enum ShopSeed {
    static let countries: [String?] = ["France", "Germany", "Brazil", "USA", nil, "Mexico", "UK"]
    static let cities: [String?] = ["Paris", "Lyon", "Berlin", nil, "Rio", "Boston", "London", nil, "Reims"]
    static let genres: [String?] = ["Jazz", "Rock", nil, "Blues", "Latin"]

    /// Creates the shop's tables and rows (deterministic for a seed). Employee 8 has no
    /// orders at all; customers `NOORD` and `NULLF` have no orders / only NULL freights.
    static func shop(seed: UInt64 = 15, orders orderCount: Int = 240) throws {
        try ShopCustomer.createTable()
        try ShopProfile.createTable()
        try ShopEmployee.createTable()
        try ShopOrder.createTable()
        try ShopLine.createTable()
        var random = SeededGenerator(seed: seed)
        let database = try #require(ShopCustomer.database)
        try database.transaction {
            var employees: [ShopEmployee] = []
            for index in 0..<8 {
                let employee = ShopEmployee()
                employee.lastName = ["Fuller", "Davolio", "Leverling", "Peacock", "Buchanan", "Suyama", "King", "Dodsworth"][index]
                employee.title = index % 3 == 2 ? nil : (index == 0 ? "Vice President" : "Representative")
                // Fuller leads; four report to him, the rest to Buchanan.
                employee.reportsTo = index == 0 ? nil : (index < 5 ? employees[0].id : employees[4].id)
                try employee.save()
                employees.append(employee)
            }
            var codes: [String] = []
            for index in 0..<30 {
                let customer = ShopCustomer()
                customer.code = String(format: "C%03d", index)
                customer.companyName = "Company \(index)"
                customer.country = countries[index % countries.count]
                customer.creditLimit = Decimal(Int.random(in: 0...20_000, using: &random)) / 4
                try customer.save()
                codes.append(customer.code)
                if index % 3 == 0 {
                    let profile = ShopProfile()
                    profile.customerCode = customer.code
                    profile.vip = index % 2 == 0
                    profile.segment = index % 9 == 0 ? nil : ["retail", "wholesale"][index % 2]
                    try profile.save()
                }
            }
            for (code, country) in [("NOORD", "France"), ("NULLF", "Germany")] {
                let customer = ShopCustomer()
                customer.code = code
                customer.companyName = code
                customer.country = country
                try customer.save()
            }
            let base = Date(timeIntervalSince1970: 1_600_000_000)
            let tricky: [Decimal?] = [Decimal(string: "1000.5"), Decimal(string: "20"), Decimal(string: "500"),
                                      Decimal(string: "500.01"), Decimal(string: "99.99"), Decimal(string: "0.1"),
                                      Decimal(string: "0.2"), Decimal(string: "123456789.123456789")]
            for index in 0..<orderCount {
                let order = ShopOrder()
                order.customerId = index % 17 == 5 ? nil : codes.randomElement(using: &random)
                if index % 23 == 7 { order.customerId = "NULLF" }
                // Employee 8 (Dodsworth) takes no orders; some orders have no employee.
                order.employeeId = index % 11 == 3 ? nil : employees[Int.random(in: 0..<7, using: &random)].id
                order.orderDate = base.addingTimeInterval(Double(Int.random(in: 0...400, using: &random)) * 86_400 + 0.25)
                if order.customerId == "NULLF" || Int.random(in: 0..<6, using: &random) == 0 {
                    order.freight = nil
                } else if index < tricky.count {
                    order.freight = tricky[index]
                } else {
                    order.freight = Decimal(Int.random(in: 0...90_000, using: &random)) / 100
                }
                order.shipCity = cities.randomElement(using: &random)!
                order.shipCountry = order.shipCity == nil ? nil : countries.randomElement(using: &random)!
                order.priority = Int.random(in: 0...4, using: &random)
                order.weight = Bool.random(using: &random) ? nil : Double(Int.random(in: 1...400, using: &random)) / 8
                order.shipped = Bool.random(using: &random)
                try order.save()
                for product in Set((0..<Int.random(in: 0...5, using: &random)).map { _ in Int64.random(in: 1...40, using: &random) }) {
                    let line = ShopLine()
                    line.orderId = order.id!
                    line.productId = product
                    line.unitPrice = Decimal(Int.random(in: 100...9_999, using: &random)) / 100
                    line.quantity = Int.random(in: 1...60, using: &random)
                    line.discount = [0, 0.05, 0.1, 0.25].randomElement(using: &random)!
                    try line.save()
                }
            }
        }
    }

    /// Creates the music library: artists, tracks (some without artist or genre), playlists,
    /// and playlist entries (one playlist empty).
    static func music(seed: UInt64 = 99) throws {
        try MusicArtist.createTable()
        try MusicTrack.createTable()
        try MusicPlaylist.createTable()
        try MusicPlaylistTrack.createTable()
        var random = SeededGenerator(seed: seed)
        let database = try #require(MusicArtist.database)
        try database.transaction {
            var artists: [MusicArtist] = []
            for index in 0..<12 {
                let artist = MusicArtist()
                artist.name = "Artist \(index)"
                try artist.save()
                artists.append(artist)
            }
            var tracks: [MusicTrack] = []
            for index in 0..<150 {
                let track = MusicTrack()
                track.title = "Track \(index)"
                track.artistId = index % 13 == 0 ? nil : artists[Int.random(in: 0..<11, using: &random)].id
                track.genre = genres.randomElement(using: &random)!
                track.seconds = Int.random(in: 60...600, using: &random)
                track.price = Decimal(Int.random(in: 49...199, using: &random)) / 100
                try track.save()
                tracks.append(track)
            }
            for index in 0..<10 {
                let playlist = MusicPlaylist()
                playlist.name = "Playlist \(index)"
                try playlist.save()
                guard index != 9 else { continue }   // the last one stays empty
                for (position, track) in tracks.shuffled(using: &random).prefix(Int.random(in: 1...30, using: &random)).enumerated() {
                    let entry = MusicPlaylistTrack()
                    entry.playlistId = playlist.id!
                    entry.trackId = track.id!
                    entry.position = position
                    try entry.save()
                }
            }
        }
    }
}

/// The ids of objects, sorted (for comparing result sets).
func sortedIDs(_ objects: [some ActiveObject]) -> [Int64] { objects.map { $0.id! }.sorted() }

/// Whether `values` holds each element once.
func allDistinct<T: Hashable>(_ values: [T]) -> Bool { Set(values).count == values.count }
