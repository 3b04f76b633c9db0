import CSQLiteBench
import Foundation

// The reference for the Northwind workloads: hand-written C-API code filling Swift final
// classes. With `Date?`/`Decimal?` it does the same work as the models: dates parsed from the
// text by hand (fixed `yyyy-MM-dd HH:mm:ss` layout, digits checked, days from the civil date,
// no formatter), freight made a `Decimal` from the REAL the way a careful hand-writer would
// for money with cents (no text).

final class RawOrder {
    var orderID: Int64 = 0
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

final class RawOrderText {
    var orderID: Int64 = 0
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

enum RawOrderReading {
    @inline(__always)
    static func text(_ s: OpaquePointer, _ index: Int32) -> String? {
        guard let bytes = sqlite3_column_text(s, index) else { return nil }
        let count = Int(sqlite3_column_bytes(s, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    @inline(__always)
    static func int(_ s: OpaquePointer, _ index: Int32) -> Int? {
        sqlite3_column_type(s, index) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(s, index))
    }

    /// `yyyy-MM-dd HH:mm:ss` (UTC) parsed by hand; nil for NULL or another layout.
    @inline(__always)
    static func date(_ s: OpaquePointer, _ index: Int32) -> Date? {
        guard let p = sqlite3_column_text(s, index), sqlite3_column_bytes(s, index) == 19 else { return nil }
        return parseDate(p)
    }

    /// The hand-written parse of the 19 bytes at `p`.
    @inline(__always)
    static func parseDate(_ p: UnsafePointer<UInt8>) -> Date? {
        let y0 = p[0] &- 48, y1 = p[1] &- 48, y2 = p[2] &- 48, y3 = p[3] &- 48
        let mo0 = p[5] &- 48, mo1 = p[6] &- 48, d0 = p[8] &- 48, d1 = p[9] &- 48
        let h0 = p[11] &- 48, h1 = p[12] &- 48, mi0 = p[14] &- 48, mi1 = p[15] &- 48
        let s0 = p[17] &- 48, s1 = p[18] &- 48
        guard max(max(max(y0, y1), max(y2, y3)), max(max(mo0, mo1), max(d0, d1)),
                  max(max(h0, h1), max(mi0, mi1)), max(s0, s1)) <= 9 else { return nil }
        let year = Int(y0) * 1000 + Int(y1) * 100 + Int(y2) * 10 + Int(y3)
        let month = Int(mo0) * 10 + Int(mo1), day = Int(d0) * 10 + Int(d1)
        // days_from_civil (Howard Hinnant).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = days * 86_400 + (Int(h0) * 10 + Int(h1)) * 3600 + (Int(mi0) * 10 + Int(mi1)) * 60
            + Int(s0) * 10 + Int(s1)
        return Date(timeIntervalSince1970: Double(seconds))
    }

    /// Money with cents: the REAL times 100, rounded, as a decimal with two places (a NUMERIC
    /// column stores whole amounts as INTEGER).
    @inline(__always)
    static func decimal(_ s: OpaquePointer, _ index: Int32) -> Decimal? {
        switch sqlite3_column_type(s, index) {
        case SQLITE_NULL: return nil
        case SQLITE_INTEGER: return Decimal(sqlite3_column_int64(s, index))
        default:
            let real = sqlite3_column_double(s, index)
            let cents = (real.magnitude * 100).rounded()
            return Decimal(sign: real.sign, exponent: -2, significand: Decimal(UInt64(cents)))
        }
    }

    @inline(__always)
    static func double(_ s: OpaquePointer, _ index: Int32) -> Double? {
        sqlite3_column_type(s, index) == SQLITE_NULL ? nil : sqlite3_column_double(s, index)
    }

    @inline(__always)
    static func order(_ s: OpaquePointer) -> RawOrder {
        let order = RawOrder()
        order.orderID = sqlite3_column_int64(s, 0)
        order.customerID = text(s, 1)
        order.employeeID = int(s, 2)
        order.orderDate = date(s, 3)
        order.requiredDate = date(s, 4)
        order.shippedDate = date(s, 5)
        order.shipVia = int(s, 6)
        order.freight = decimal(s, 7)
        order.shipName = text(s, 8)
        order.shipAddress = text(s, 9)
        order.shipCity = text(s, 10)
        order.shipRegion = text(s, 11)
        order.shipPostalCode = text(s, 12)
        order.shipCountry = text(s, 13)
        return order
    }

    @inline(__always)
    static func orderText(_ s: OpaquePointer) -> RawOrderText {
        let order = RawOrderText()
        order.orderID = sqlite3_column_int64(s, 0)
        order.customerID = text(s, 1)
        order.employeeID = int(s, 2)
        order.orderDate = text(s, 3)
        order.requiredDate = text(s, 4)
        order.shippedDate = text(s, 5)
        order.shipVia = int(s, 6)
        order.freight = double(s, 7)
        order.shipName = text(s, 8)
        order.shipAddress = text(s, 9)
        order.shipCity = text(s, 10)
        order.shipRegion = text(s, 11)
        order.shipPostalCode = text(s, 12)
        order.shipCountry = text(s, 13)
        return order
    }

    /// Steps `s` to the end, making one object per row.
    @inline(__always)
    static func fetchAll<T>(_ s: OpaquePointer, _ connection: RawConnection, _ read: (OpaquePointer) -> T) throws -> [T] {
        defer { sqlite3_reset(s) }
        var objects: [T] = []
        while true {
            let code = sqlite3_step(s)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw connection.error("fetch Orders") }
            objects.append(read(s))
        }
        return objects
    }
}
