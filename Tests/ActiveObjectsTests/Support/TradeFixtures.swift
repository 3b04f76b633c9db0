import Foundation
import Testing
@testable import ActiveObjects

// A realistic dataset for the queries across relations, grouping and batch writes: a shop in
// the shape of Northwind (customers with TEXT codes, orders, order lines with a composite key,
// employees reporting to employees) and a music library with a many-to-many relation. Every
// test computes its expected results in Swift from `findAll()` of these models.

final class TradeCustomer: ModelTestRecord {
    override class var tableName: String { "Customers" }
    override class var primaryKey: String { "CustomerID" }
    @Column("CustomerID") var code: String = ""
    @Column("CompanyName") var companyName: String = ""
    @Column("Country") var country: String? = nil
    @Column("CreditLimit") var creditLimit: Decimal = 0
    var orders: HasMany<TradeOrder> { hasMany(\.$customerId) }
    var profile: HasOne<TradeProfile> { hasOne(\.$customerCode) }
}

final class TradeProfile: ModelTestRecord {
    override class var tableName: String { "CustomerProfiles" }
    @Column(references: TradeCustomer.self, onDelete: .cascade) var customerCode: String = ""
    @Column var vip: Bool = false
    @Column var segment: String? = nil
    var customer: BelongsTo<TradeCustomer> { belongsTo(\.$customerCode) }
}

final class TradeEmployee: ModelTestRecord {
    override class var tableName: String { "Employees" }
    override class var primaryKey: String { "EmployeeID" }
    @Column("LastName") var lastName: String = ""
    @Column("Title") var title: String? = nil
    @Column("ReportsTo", references: TradeEmployee.self) var reportsTo: Int64? = nil
    var manager: BelongsTo<TradeEmployee> { belongsTo(\.$reportsTo) }
    var reports: HasMany<TradeEmployee> { hasMany(\.$reportsTo) }
    var orders: HasMany<TradeOrder> { hasMany(\.$employeeId) }
}

final class TradeOrder: ModelTestRecord {
    override class var tableName: String { "Orders" }
    override class var primaryKey: String { "OrderID" }
    @Column("CustomerID", references: TradeCustomer.self) var customerId: String? = nil
    @Column("EmployeeID", references: TradeEmployee.self) var employeeId: Int64? = nil
    @Column("OrderDate") var orderDate: Date = Date(timeIntervalSince1970: 0)
    @Column("Freight") var freight: Decimal? = nil
    @Column("ShipCity") var shipCity: String? = nil
    @Column("ShipCountry") var shipCountry: String? = nil
    @Column("Priority") var priority: Int = 0
    @Column("Weight") var weight: Double? = nil
    @Column("Shipped") var shipped: Bool = false
    var customer: BelongsTo<TradeCustomer> { belongsTo(\.$customerId) }
    var employee: BelongsTo<TradeEmployee> { belongsTo(\.$employeeId) }
    var lines: HasMany<TradeLine> { hasMany(\.$orderId) }
}

final class TradeLine: ModelTestRecord {
    override class var tableName: String { "Order Details" }
    override class var primaryKeys: [String] { ["OrderID", "ProductID"] }
    @Column("OrderID", references: TradeOrder.self, onDelete: .cascade) var orderId: Int64 = 0
    @Column("ProductID") var productId: Int64 = 0
    @Column("UnitPrice") var unitPrice: Decimal = 0
    @Column("Quantity") var quantity: Int = 0
    @Column("Discount") var discount: Double = 0
    var order: BelongsTo<TradeOrder> { belongsTo(\.$orderId) }
}

final class TuneArtist: ModelTestRecord {
    @Column var name: String = ""
    var tracks: HasMany<TuneTrack> { hasMany(\.$artistId) }
}

final class TuneTrack: ModelTestRecord {
    @Column var title: String = ""
    @Column(references: TuneArtist.self) var artistId: Int64? = nil
    @Column var genre: String? = nil
    @Column var seconds: Int = 0
    @Column var price: Decimal = 0
    var artist: BelongsTo<TuneArtist> { belongsTo(\.$artistId) }
    var playlists: HasManyThrough<TunePlaylist> { hasMany(through: \TunePlaylistTrack.$trackId, \TunePlaylistTrack.$playlistId) }
}

final class TunePlaylist: ModelTestRecord {
    @Column var name: String = ""
    var tracks: HasManyThrough<TuneTrack> { hasMany(through: \TunePlaylistTrack.$playlistId, \TunePlaylistTrack.$trackId) }
}

final class TunePlaylistTrack: ModelTestRecord {
    override class var primaryKeys: [String] { ["playlistId", "trackId"] }
    override class var withoutRowID: Bool { true }
    @Column(references: TunePlaylist.self, onDelete: .cascade) var playlistId: Int64 = 0
    @Column(references: TuneTrack.self, onDelete: .cascade) var trackId: Int64 = 0
    @Column var position: Int = 0
}

/// Everything the shop holds, read back with `findAll()`.
struct ShopSnapshot {
    var customers: [TradeCustomer]
    var profiles: [TradeProfile]
    var employees: [TradeEmployee]
    var orders: [TradeOrder]
    var lines: [TradeLine]

    init() throws {
        customers = try TradeCustomer.findAll()
        profiles = try TradeProfile.findAll()
        employees = try TradeEmployee.findAll()
        orders = try TradeOrder.findAll()
        lines = try TradeLine.findAll()
    }

    func customer(_ code: String?) -> TradeCustomer? { customers.first { $0.code == code } }
    func orders(of customer: TradeCustomer) -> [TradeOrder] { orders.filter { $0.customerId == customer.code } }
    func lines(of order: TradeOrder) -> [TradeLine] { lines.filter { $0.orderId == order.id } }
}

/// The music library, read back with `findAll()`.
struct MusicSnapshot {
    var artists: [TuneArtist]
    var tracks: [TuneTrack]
    var playlists: [TunePlaylist]
    var entries: [TunePlaylistTrack]

    init() throws {
        artists = try TuneArtist.findAll()
        tracks = try TuneTrack.findAll()
        playlists = try TunePlaylist.findAll()
        // Not findAll(): it orders a WITHOUT ROWID table by "rowid" (reported to the lead).
        entries = try TunePlaylistTrack.all.order(by: \.$playlistId).order(by: \.$trackId).all()
    }

    func tracks(of playlist: TunePlaylist) -> [TuneTrack] {
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
        try TradeCustomer.createTable()
        try TradeProfile.createTable()
        try TradeEmployee.createTable()
        try TradeOrder.createTable()
        try TradeLine.createTable()
        var random = SeededGenerator(seed: seed)
        let database = try #require(TradeCustomer.database)
        try database.transaction {
            var employees: [TradeEmployee] = []
            for index in 0..<8 {
                let employee = TradeEmployee()
                employee.lastName = ["Fuller", "Davolio", "Leverling", "Peacock", "Buchanan", "Suyama", "King", "Dodsworth"][index]
                employee.title = index % 3 == 2 ? nil : (index == 0 ? "Vice President" : "Representative")
                // Fuller leads; four report to him, the rest to Buchanan.
                employee.reportsTo = index == 0 ? nil : (index < 5 ? employees[0].id : employees[4].id)
                try employee.save()
                employees.append(employee)
            }
            var codes: [String] = []
            for index in 0..<30 {
                let customer = TradeCustomer()
                customer.code = String(format: "C%03d", index)
                customer.companyName = "Company \(index)"
                customer.country = countries[index % countries.count]
                customer.creditLimit = Decimal(Int.random(in: 0...20_000, using: &random)) / 4
                try customer.save()
                codes.append(customer.code)
                if index % 3 == 0 {
                    let profile = TradeProfile()
                    profile.customerCode = customer.code
                    profile.vip = index % 2 == 0
                    profile.segment = index % 9 == 0 ? nil : ["retail", "wholesale"][index % 2]
                    try profile.save()
                }
            }
            for (code, country) in [("NOORD", "France"), ("NULLF", "Germany")] {
                let customer = TradeCustomer()
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
                let order = TradeOrder()
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
                    let line = TradeLine()
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
        try TuneArtist.createTable()
        try TuneTrack.createTable()
        try TunePlaylist.createTable()
        try TunePlaylistTrack.createTable()
        var random = SeededGenerator(seed: seed)
        let database = try #require(TuneArtist.database)
        try database.transaction {
            var artists: [TuneArtist] = []
            for index in 0..<12 {
                let artist = TuneArtist()
                artist.name = "Artist \(index)"
                try artist.save()
                artists.append(artist)
            }
            var tracks: [TuneTrack] = []
            for index in 0..<150 {
                let track = TuneTrack()
                track.title = "Track \(index)"
                track.artistId = index % 13 == 0 ? nil : artists[Int.random(in: 0..<11, using: &random)].id
                track.genre = genres.randomElement(using: &random)!
                track.seconds = Int.random(in: 60...600, using: &random)
                track.price = Decimal(Int.random(in: 49...199, using: &random)) / 100
                try track.save()
                tracks.append(track)
            }
            for index in 0..<10 {
                let playlist = TunePlaylist()
                playlist.name = "Playlist \(index)"
                try playlist.save()
                guard index != 9 else { continue }   // the last one stays empty
                for (position, track) in tracks.shuffled(using: &random).prefix(Int.random(in: 1...30, using: &random)).enumerated() {
                    let entry = TunePlaylistTrack()
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
