import CSQLiteBench
import Foundation

// The public yardstick of Swift SQLite libraries: fetch every row of the Northwind sample
// database's `Orders` table. The table here has that shape (the same CREATE statement, 14
// columns, dates as TEXT `yyyy-MM-dd HH:mm:ss`, freight as NUMERIC holding REALs with cents,
// NULLs where Northwind has them), with deterministic, realistic values.

/// The `Orders` table as the Northwind SQLite file declares it (its foreign keys left out:
/// the other tables are not needed).
let createOrdersTableSQL = """
    CREATE TABLE IF NOT EXISTS [Orders](
       [OrderID]INTEGER PRIMARY KEY AUTOINCREMENT,
       [CustomerID]TEXT,
       [EmployeeID]INTEGER,
       [OrderDate]DATETIME,
       [RequiredDate]DATETIME,
       [ShippedDate]DATETIME,
       [ShipVia]INTEGER,
       [Freight]NUMERIC DEFAULT 0,
       [ShipName]TEXT,
       [ShipAddress]TEXT,
       [ShipCity]TEXT,
       [ShipRegion]TEXT,
       [ShipPostalCode]TEXT,
       [ShipCountry]TEXT
    )
    """

/// The columns every contender reads, in this order.
let selectOrdersSQL = """
    SELECT OrderID, CustomerID, EmployeeID, OrderDate, RequiredDate, ShippedDate, ShipVia, Freight, \
    ShipName, ShipAddress, ShipCity, ShipRegion, ShipPostalCode, ShipCountry FROM Orders
    """

/// One customer: the ship fields of its orders.
struct NorthwindCustomer {
    var code: String
    var name: String
    var address: String
    var city: String
    var region: String?
    var postalCode: String?
    var country: String
}

/// The values of one order row.
struct OrderSeed {
    var orderID: Int64
    var customer: NorthwindCustomer
    var employeeID: Int
    var orderDate: String
    var requiredDate: String
    var shippedDate: String?
    var shipVia: Int
    var freight: Double
}

enum NorthwindData {
    /// Rows in the Northwind file's `Orders` table.
    static let rowCount = 16_818

    private static let cities: [(city: String, region: String?, country: String, postal: String)] = [
        ("Reims", nil, "France", "51100"), ("Münster", nil, "Germany", "44087"),
        ("Rio de Janeiro", "RJ", "Brazil", "05454-876"), ("Lyon", nil, "France", "69004"),
        ("Charleroi", nil, "Belgium", "B-6000"), ("Bern", nil, "Switzerland", "3012"),
        ("Genève", nil, "Switzerland", "1204"), ("Resende", "SP", "Brazil", "08737-363"),
        ("San Cristóbal", "Táchira", "Venezuela", "5022"), ("Graz", nil, "Austria", "8010"),
        ("México D.F.", nil, "Mexico", "05022"), ("Köln", nil, "Germany", "50739"),
        ("Albuquerque", "NM", "USA", "87110"), ("Bräcke", nil, "Sweden", "S-844 67"),
        ("Strasbourg", nil, "France", "67000"), ("Oulu", nil, "Finland", "90110"),
        ("Madrid", nil, "Spain", "28023"), ("Lander", "WY", "USA", "82520"),
        ("Cork", "Co. Cork", "Ireland", "T12 X70A"), ("London", nil, "UK", "WX1 6LT"),
        ("Seattle", "WA", "USA", "98124"), ("Portland", "OR", "USA", "97229"),
        ("Vancouver", "BC", "Canada", "V3F 2K1"), ("Montréal", "Québec", "Canada", "H1J 1C3"),
        ("Torino", nil, "Italy", "10100"), ("Reggio Emilia", nil, "Italy", "42100"),
        ("Lisboa", nil, "Portugal", "1756"), ("Barcelona", nil, "Spain", "08022"),
        ("Sevilla", nil, "Spain", "41101"), ("Buenos Aires", nil, "Argentina", "1010"),
        ("Caracas", "DF", "Venezuela", "1081"), ("Kirkland", "WA", "USA", "98034"),
        ("Århus", nil, "Denmark", "8200"), ("Stavern", nil, "Norway", "4110"),
        ("Warszawa", nil, "Poland", "01-012"), ("Salzburg", nil, "Austria", "5020"),
    ]
    private static let nameWords = ["Vins", "Alcools", "Chevalier", "Toms", "Spezialitäten", "Hanari",
                                    "Carnes", "Victuailles", "Suprêmes", "Délices", "Chop-suey", "Chinese",
                                    "Richter", "Supermarkt", "Wellington", "Importadora", "Hungry", "Owl",
                                    "All-Night", "Grocers", "Que", "Delícia", "Ottilies", "Käseladen",
                                    "Rattlesnake", "Canyon", "Grocery", "Folk", "och", "fä", "HB", "Blondel",
                                    "père", "et", "fils", "Frankenversand", "Great", "Lakes", "Food", "Market"]
    private static let streets = ["rue de l'Abbaye", "Luisenstr.", "Rua do Paço", "boulevard Charonne",
                                  "Hauptstr.", "Berguvsvägen", "Via Ludovico il Moro", "Avda. de la Constitución",
                                  "Mataderos", "City Center Plaza", "Kirchgasse", "Rua Orós",
                                  "Walserweg", "Torikatu", "Gran Vía", "Place Kléber", "Strada Provinciale",
                                  "Carrera 22 con Ave. Carlos Soublette", "Maubelstr.", "Fauntleroy Circus"]

    /// 91 customers, as in Northwind; about 5 % of them have no region on top of the cities that
    /// have none, one has no postal code.
    static func customers(using rng: inout SplitMix64) -> [NorthwindCustomer] {
        (0..<91).map { index in
            var code = ""
            for _ in 0..<5 { code.append(Character(Unicode.Scalar(UInt8(65 + rng.next() % 26)))) }
            let place = cities[Int(rng.next() % UInt64(cities.count))]
            let words = (0..<(2 + Int(rng.next() % 3))).map { _ in nameWords[Int(rng.next() % UInt64(nameWords.count))] }
            let address = "\(1 + rng.next() % 300) \(streets[Int(rng.next() % UInt64(streets.count))])"
            // Regions filled in for most customers (the yardstick's ~5 % NULL regions).
            let region = rng.next() % 20 == 0 ? nil : (place.region ?? "\(place.country.prefix(2).uppercased())-\(1 + rng.next() % 9)")
            return NorthwindCustomer(code: code, name: words.joined(separator: " "), address: address,
                                     city: place.city, region: region,
                                     postalCode: index == 41 ? nil : place.postal, country: place.country)
        }
    }

    /// `yyyy-MM-dd HH:mm:ss` of seconds since 1970 (UTC).
    static func text(ofSeconds seconds: Int) -> String {
        let days = seconds / 86_400, rest = seconds % 86_400
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(rest / 3600, 2)):\(pad(rest / 60 % 60, 2)):\(pad(rest % 60, 2))"
    }

    /// The rows, in OrderID order (from 10248, like Northwind): order dates spread over
    /// 2012-07-04…2023-10-27 in order, required 2–6 weeks later, shipped 1–35 days later or
    /// not yet (3 %), freight 0.02…1007.64 with cents, mostly small (log-uniform).
    static func orders(count: Int = rowCount, seed: UInt64 = 0x0B0E_5EED) -> [OrderSeed] {
        var rng = SplitMix64(seed: seed)
        let customers = customers(using: &rng)
        let start = 1_341_360_000   // 2012-07-04 00:00:00 UTC
        let span = 1_698_364_800 - start   // …2023-10-27
        var previous = start
        return (0..<count).map { index in
            let nominal = start + span * index / count
            let orderSeconds = max(previous, nominal + Int(rng.next() % 86_400))
            previous = orderSeconds
            let required = orderSeconds + 86_400 * (14 + 7 * Int(rng.next() % 5))
            let shipped: Int? = rng.next() % 100 < 3 ? nil
                : orderSeconds + 86_400 * (1 + Int(rng.next() % 35)) + Int(rng.next() % 36_000)
            let logCents = log(2.0) + (log(100_764.0) - log(2.0)) * Double(rng.next() % 1_000_000) / 1_000_000
            let cents = Int(exp(logCents).rounded())
            return OrderSeed(orderID: Int64(10_248 + index),
                             customer: customers[Int(rng.next() % UInt64(customers.count))],
                             employeeID: 1 + Int(rng.next() % 9),
                             orderDate: text(ofSeconds: orderSeconds),
                             requiredDate: text(ofSeconds: required),
                             shippedDate: shipped.map(text(ofSeconds:)),
                             shipVia: 1 + Int(rng.next() % 3),
                             freight: Double(cents) / 100)
        }
    }
}

extension RawConnection {
    /// Creates and fills `Orders` (setup only), then checkpoints.
    func populateOrders(_ orders: [OrderSeed]) throws {
        try execute(createOrdersTableSQL)
        try execute("DELETE FROM Orders")
        let s = try prepare("""
            INSERT INTO Orders (OrderID, CustomerID, EmployeeID, OrderDate, RequiredDate, ShippedDate, ShipVia, \
            Freight, ShipName, ShipAddress, ShipCity, ShipRegion, ShipPostalCode, ShipCountry) \
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        defer { sqlite3_finalize(s) }
        let transient = bench_sqlite_transient()
        func bind(_ index: Int32, _ text: String?) {
            if let text { sqlite3_bind_text(s, index, text, -1, transient) } else { sqlite3_bind_null(s, index) }
        }
        try execute("BEGIN IMMEDIATE")
        for order in orders {
            sqlite3_bind_int64(s, 1, order.orderID)
            bind(2, order.customer.code)
            sqlite3_bind_int64(s, 3, Int64(order.employeeID))
            bind(4, order.orderDate)
            bind(5, order.requiredDate)
            bind(6, order.shippedDate)
            sqlite3_bind_int64(s, 7, Int64(order.shipVia))
            sqlite3_bind_double(s, 8, order.freight)
            bind(9, order.customer.name)
            bind(10, order.customer.address)
            bind(11, order.customer.city)
            bind(12, order.customer.region)
            bind(13, order.customer.postalCode)
            bind(14, order.customer.country)
            guard sqlite3_step(s) == SQLITE_DONE else { throw error("populate Orders") }
            sqlite3_reset(s)
        }
        try execute("COMMIT")
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}

// MARK: Checksums (cheap: no string traversal, no Decimal arithmetic)

/// What every contender adds up per order of the `Date?`/`Decimal?` variant. The freight
/// counts only as present or not: GRDB reads REAL into `Decimal` through `Decimal(Double)`,
/// whose digits differ for some values, so the exact decimals are compared once, untimed
/// (``NorthwindCheck``), instead.
@inline(__always)
func orderChecksum(id: Int64, customerID: String?, employeeID: Int?, orderDate: Date?, requiredDate: Date?,
                   shippedDate: Date?, shipVia: Int?, hasFreight: Bool, shipName: String?,
                   shipRegion: String?, shipCountry: String?) -> Int {
    var sum = Int(id) &+ (customerID?.utf8.count ?? 0) &+ (employeeID ?? 0) &+ (shipVia ?? 0)
    sum &+= Int(orderDate?.timeIntervalSince1970 ?? 0) &+ Int(requiredDate?.timeIntervalSince1970 ?? 0)
    sum &+= Int(shippedDate?.timeIntervalSince1970 ?? 0) &+ (hasFreight ? 1 : 0)
    sum &+= (shipName?.utf8.count ?? 0) &+ (shipRegion == nil ? 7 : 0) &+ (shipCountry?.utf8.count ?? 0)
    return sum
}

/// The same for the variant with `String?` dates and `Double?` freight.
@inline(__always)
func orderTextChecksum(id: Int64, customerID: String?, employeeID: Int?, orderDate: String?, requiredDate: String?,
                       shippedDate: String?, shipVia: Int?, freight: Double?, shipName: String?,
                       shipRegion: String?, shipCountry: String?) -> Int {
    var sum = Int(id) &+ (customerID?.utf8.count ?? 0) &+ (employeeID ?? 0) &+ (shipVia ?? 0)
    sum &+= (orderDate?.utf8.count ?? 0) &+ (requiredDate?.utf8.count ?? 0) &+ (shippedDate?.utf8.count ?? 1)
    sum &+= Int(((freight ?? 0) * 100).rounded())
    sum &+= (shipName?.utf8.count ?? 0) &+ (shipRegion == nil ? 7 : 0) &+ (shipCountry?.utf8.count ?? 0)
    return sum
}

/// Field texts of one order, for the untimed check that every contender read the same values.
func fieldTexts(_ values: [Any?]) -> [String] {
    values.map { value in
        switch value {
        case nil: return "NULL"
        case let date as Date: return "date:\(date.timeIntervalSince1970)"
        case let decimal as Decimal: return "decimal:\(decimal)"
        case let some?: return "\(some)"
        }
    }
}

/// The SQLite library's version, e.g. "3.40.1".
func sqliteVersion() -> String { String(cString: sqlite3_libversion()) }
