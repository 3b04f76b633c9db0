import Foundation
import GRDB

// The Northwind workloads for GRDB 7.10.0: records written by hand (`init(row:)` by index, the
// fastest documented form) and `Codable` records (synthesized decoding, coding keys naming the
// columns), each with `Date?`/`Decimal?` and with `String?`/`Double?`. GRDB reads dates with
// its own text parser and REAL into `Decimal` with `Decimal(Double)`.

/// What the generic GRDB contender needs from an `Orders` record.
protocol OrderRecord: FetchableRecord, TableRecord {
    var checksum: Int { get }
    var fields: [String] { get }
}

extension OrderRecord {
    static var databaseTableName: String { "Orders" }
}

struct HandOrder: OrderRecord {
    var orderID: Int64
    var customerID: String?
    var employeeID: Int?
    var orderDate: Date?
    var requiredDate: Date?
    var shippedDate: Date?
    var shipVia: Int?
    var freight: Decimal?
    var shipName: String?
    var shipAddress: String?
    var shipCity: String?
    var shipRegion: String?
    var shipPostalCode: String?
    var shipCountry: String?

    init(row: Row) throws {
        orderID = row[0]
        customerID = row[1]
        employeeID = row[2]
        orderDate = row[3]
        requiredDate = row[4]
        shippedDate = row[5]
        shipVia = row[6]
        freight = row[7]
        shipName = row[8]
        shipAddress = row[9]
        shipCity = row[10]
        shipRegion = row[11]
        shipPostalCode = row[12]
        shipCountry = row[13]
    }

    var checksum: Int {
        orderChecksum(id: orderID, customerID: customerID, employeeID: employeeID, orderDate: orderDate,
                      requiredDate: requiredDate, shippedDate: shippedDate, shipVia: shipVia,
                      hasFreight: freight != nil, shipName: shipName, shipRegion: shipRegion, shipCountry: shipCountry)
    }

    var fields: [String] {
        fieldTexts([orderID, customerID, employeeID, orderDate, requiredDate, shippedDate, shipVia, freight,
                    shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry])
    }
}

struct HandOrderText: OrderRecord {
    var orderID: Int64
    var customerID: String?
    var employeeID: Int?
    var orderDate: String?
    var requiredDate: String?
    var shippedDate: String?
    var shipVia: Int?
    var freight: Double?
    var shipName: String?
    var shipAddress: String?
    var shipCity: String?
    var shipRegion: String?
    var shipPostalCode: String?
    var shipCountry: String?

    init(row: Row) throws {
        orderID = row[0]
        customerID = row[1]
        employeeID = row[2]
        orderDate = row[3]
        requiredDate = row[4]
        shippedDate = row[5]
        shipVia = row[6]
        freight = row[7]
        shipName = row[8]
        shipAddress = row[9]
        shipCity = row[10]
        shipRegion = row[11]
        shipPostalCode = row[12]
        shipCountry = row[13]
    }

    var checksum: Int {
        orderTextChecksum(id: orderID, customerID: customerID, employeeID: employeeID, orderDate: orderDate,
                          requiredDate: requiredDate, shippedDate: shippedDate, shipVia: shipVia,
                          freight: freight, shipName: shipName, shipRegion: shipRegion, shipCountry: shipCountry)
    }

    var fields: [String] {
        fieldTexts([orderID, customerID, employeeID, orderDate, requiredDate, shippedDate, shipVia, freight,
                    shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry])
    }
}

/// The column names, shared by both Codable records.
enum OrderCodingKeys: String, CodingKey {
    case orderID = "OrderID", customerID = "CustomerID", employeeID = "EmployeeID", orderDate = "OrderDate"
    case requiredDate = "RequiredDate", shippedDate = "ShippedDate", shipVia = "ShipVia", freight = "Freight"
    case shipName = "ShipName", shipAddress = "ShipAddress", shipCity = "ShipCity", shipRegion = "ShipRegion"
    case shipPostalCode = "ShipPostalCode", shipCountry = "ShipCountry"
}

struct CodableOrder: Codable, OrderRecord {
    typealias CodingKeys = OrderCodingKeys
    var orderID: Int64
    var customerID: String?
    var employeeID: Int?
    var orderDate: Date?
    var requiredDate: Date?
    var shippedDate: Date?
    var shipVia: Int?
    var freight: Decimal?
    var shipName: String?
    var shipAddress: String?
    var shipCity: String?
    var shipRegion: String?
    var shipPostalCode: String?
    var shipCountry: String?

    var checksum: Int {
        orderChecksum(id: orderID, customerID: customerID, employeeID: employeeID, orderDate: orderDate,
                      requiredDate: requiredDate, shippedDate: shippedDate, shipVia: shipVia,
                      hasFreight: freight != nil, shipName: shipName, shipRegion: shipRegion, shipCountry: shipCountry)
    }

    var fields: [String] {
        fieldTexts([orderID, customerID, employeeID, orderDate, requiredDate, shippedDate, shipVia, freight,
                    shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry])
    }
}

struct CodableOrderText: Codable, OrderRecord {
    typealias CodingKeys = OrderCodingKeys
    var orderID: Int64
    var customerID: String?
    var employeeID: Int?
    var orderDate: String?
    var requiredDate: String?
    var shippedDate: String?
    var shipVia: Int?
    var freight: Double?
    var shipName: String?
    var shipAddress: String?
    var shipCity: String?
    var shipRegion: String?
    var shipPostalCode: String?
    var shipCountry: String?

    var checksum: Int {
        orderTextChecksum(id: orderID, customerID: customerID, employeeID: employeeID, orderDate: orderDate,
                          requiredDate: requiredDate, shippedDate: shippedDate, shipVia: shipVia,
                          freight: freight, shipName: shipName, shipRegion: shipRegion, shipCountry: shipCountry)
    }

    var fields: [String] {
        fieldTexts([orderID, customerID, employeeID, orderDate, requiredDate, shippedDate, shipVia, freight,
                    shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry])
    }
}

extension GRDBContender {
    func fetchOrders() throws -> Int {
        try queue.read { db in try Record.Order.fetchAll(db) }.reduce(0) { $0 &+ $1.checksum }
    }

    func fetchOrdersAsText() throws -> Int {
        try queue.read { db in try Record.OrderText.fetchAll(db) }.reduce(0) { $0 &+ $1.checksum }
    }

    func orderFields(text: Bool) throws -> [[String]] {
        try queue.read { db in
            text ? try Record.OrderText.fetchAll(db).map(\.fields) : try Record.Order.fetchAll(db).map(\.fields)
        }
    }
}
