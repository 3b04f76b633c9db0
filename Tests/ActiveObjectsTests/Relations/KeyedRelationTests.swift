import Foundation
import Testing
@testable import ActiveObjects

/// belongsTo / hasMany / hasOne over keys of any type (API.md §12): TEXT customer codes
/// (optional and not), UUID payment ids (optional and not), Int64 ids (optional and not);
/// `references:` emitting the right REFERENCES clause; `including` in 2 queries for any N.
@Suite struct KeyedRelationTests {
    // MARK: DDL

    @Test func referencesNameTheParentsKeyColumn() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Shop.createTables()
            try Music.createTables()
            let creates = recorder.statements.filter { $0.hasPrefix("CREATE TABLE") }
            func create(_ table: String) -> String { creates.first { $0.contains("EXISTS \"\(table)\" (") } ?? "" }
            #expect(create("orders").contains(#""customer_code" TEXT DEFAULT NULL REFERENCES "customers"("code") ON DELETE RESTRICT"#))
            #expect(create("customer_profiles").contains(#""customer_code" TEXT NOT NULL REFERENCES "customers"("code") ON DELETE CASCADE"#))
            #expect(create("Gift Cards").contains(#""Customer Code" TEXT DEFAULT NULL REFERENCES "customers"("code") ON DELETE SET NULL"#))
            #expect(create("refunds").contains(#""payment_id" TEXT DEFAULT NULL REFERENCES "payments"("payment_id") ON DELETE CASCADE"#))
            #expect(create("payments").contains(#""order_id" INTEGER NOT NULL DEFAULT 0 REFERENCES "orders"("id") ON DELETE NO ACTION"#))
            #expect(create("track_tags").contains(#""tag_name" TEXT NOT NULL REFERENCES "tags"("name") ON DELETE CASCADE"#))

            // SQLite sees the same foreign keys.
            let keys = try db.rows("SELECT \"from\", \"table\", \"to\" FROM pragma_foreign_key_list('refunds')")
                .map { "\(try $0[0] as String)->\(try $0[1] as String).\(try $0[2] as String)" }
            #expect(keys == ["payment_id->payments.payment_id"])
            // …and enforce them: an unknown customer code is refused.
            let stray = ShopOrder()
            stray.customerCode = "NOBODY"
            #expect(expectDatabaseError { try stray.save() }?.resultCode == .constraint)
        }
    }

    // MARK: String keys

    @Test func belongsToAndHasManyOverATextKey() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try Shop.createTables()
            let alfki = try Shop.customer("ALFKI", "Alfreds")
            let anton = try Shop.customer("ANTON", "Antonio")
            let first = try Shop.order(for: "ALFKI")
            try Shop.order(for: "ALFKI", status: "shipped")
            let anonymous = try Shop.order(for: nil)

            let (customer, statements) = try recorder.recording { try first.customer.get() }
            #expect(customer?.code == "ALFKI")
            #expect(selectStatements(statements).first?.contains(#"WHERE "code" = ?"#) == true, "\(statements)")
            #expect(try anonymous.customer.get() == nil)

            #expect(try alfki.orders.count() == 2)
            #expect(try alfki.orders.all().map(\.id) == [first.id, first.id.map { $0 + 1 }])
            #expect(try alfki.orders.where(["status": "shipped"]).count() == 1)
            #expect(try alfki.orders.where(\.$status, .equal("open")).all().map(\.id) == [first.id])
            #expect(try anton.orders.all().isEmpty)

            // set() points the key at another customer; get() follows before saving.
            try first.customer.set(anton)
            #expect(first.customerCode == "ANTON")
            #expect(try first.customer.get()?.name == "Antonio")
            try first.save()
            #expect(try anton.orders.count() == 1)
            try first.customer.set(nil)
            #expect(first.customerCode == nil)
            try first.save()
            #expect(try ShopOrder.find(where: ["customer_code": nil]).count == 2)

            // add() sets the key and saves the child.
            try anton.orders.add(anonymous)
            #expect(anonymous.customerCode == "ANTON")
            #expect(!anonymous.hasChanges)
            #expect(try anton.orders.count() == 1)
        }
    }

    @Test func addToANewTextKeyedParentSavesItFirstOrNothing() throws {
        try withModelDB { db in
            try Shop.createTables()
            let bergs = ShopCustomer()
            bergs.code = "BERGS"
            bergs.name = "Berglunds"
            let order = ShopOrder()
            try bergs.orders.add(order)
            #expect(bergs.id != nil)
            #expect(try ShopCustomer.find(key: "BERGS") != nil)
            #expect(order.customerCode == "BERGS")
            #expect(try bergs.orders.count() == 1)

            // A parent that fails validation: nothing is written, both objects stay new.
            let nameless = ShopCustomer()
            let orphan = ShopOrder()
            let error = expectActiveObjectError { try nameless.orders.add(orphan) }
            #expect(error?.isValidationFailed == true)
            #expect(nameless.id == nil && orphan.id == nil)
            #expect(orphan.customerCode == nil)
            #expect(try modelRowCount(db, "orders") == 1)
            #expect(try modelRowCount(db, "customers") == 1)
        }
    }

    @Test func hasOneOverANonOptionalTextKeyThatIsAlsoTheKey() throws {
        try withModelDB { db in
            try Shop.createTables()
            let alfki = try Shop.customer("ALFKI", "Alfreds")
            #expect(try alfki.profile.get() == nil)
            let profile = ShopCustomerProfile()
            try profile.customer.set(alfki)
            profile.newsletter = true
            try profile.save()
            #expect(profile.customerCode == "ALFKI")
            #expect(try alfki.profile.get()?.newsletter == true)
            #expect(try ShopCustomerProfile.find(key: "ALFKI")?.customer.get()?.name == "Alfreds")
            // A non-optional key cannot be cleared.
            #expect(expectActiveObjectError { try profile.customer.set(nil) }?.isInvalidValue == true)
            #expect(profile.customerCode == "ALFKI")
            // ON DELETE CASCADE on a TEXT key.
            try db.execute("DELETE FROM orders")
            #expect(try alfki.delete())
            #expect(try ShopCustomerProfile.countAll() == 0)
        }
    }

    // MARK: UUID keys

    @Test func relationsOverUUIDKeys() throws {
        try withModelDB { db in
            try Shop.createTables()
            let order = try Shop.order(for: nil)
            let payment = ShopPayment()
            payment.orderId = try requireID(order)
            payment.amountCents = 5000
            try payment.save()
            let other = ShopPayment()
            other.orderId = try requireID(order)
            try other.save()

            // Optional UUID foreign key.
            let refund = ShopRefund()
            refund.reason = "damaged"
            try refund.payment.set(payment)
            #expect(refund.paymentId == payment.paymentId)
            try refund.save()
            #expect(try db.scalar("SELECT payment_id FROM refunds") == payment.paymentId.uuidString.lowercased())
            #expect(try refund.payment.get()?.amountCents == 5000)
            let second = ShopRefund()
            try payment.refunds.add(second)
            #expect(try payment.refunds.all().map(\.id) == [refund.id, second.id])
            #expect(try other.refunds.count() == 0)
            #expect(try order.payments.count() == 2)

            // Non-optional UUID foreign key, has-one.
            let receipt = ShopReceipt()
            receipt.text = "Thank you"
            #expect(try payment.receipt.get() == nil)
            receipt.paymentId = payment.paymentId
            try receipt.save()
            #expect(try payment.receipt.get()?.text == "Thank you")
            #expect(try other.receipt.get() == nil)

            // Cascades follow UUID keys.
            #expect(try payment.delete())
            #expect(try ShopRefund.countAll() == 0)
            #expect(try ShopReceipt.countAll() == 0)
        }
    }

    // MARK: Int64 keys

    @Test func relationsOverOptionalAndNonOptionalInt64Keys() throws {
        try withModelDB { _ in
            try Music.createTables()
            let miles = MusicArtist()
            miles.name = "Miles Davis"
            let kind = MusicAlbum()
            kind.title = "Kind of Blue"
            try miles.albums.add(kind)   // saves the new artist first
            #expect(kind.artistId == miles.id)
            #expect(try kind.artist.get()?.name == "Miles Davis")
            let soWhat = try Music.track("So What", album: kind)
            let single = try Music.track("Single")
            #expect(try soWhat.album.get()?.title == "Kind of Blue")
            #expect(try single.album.get() == nil)
            try single.album.set(kind)
            try single.save()
            #expect(try kind.tracks.all().map(\.title) == ["So What", "Single"])
            // ON DELETE SET NULL on the optional key.
            #expect(try kind.delete())
            try soWhat.reload()
            #expect(soWhat.albumId == nil)
        }
    }

    @Test func asyncRelationReadsOverTextAndUUIDKeys() async throws {
        try await withTimeout(30) {
            try await withAsyncModelDB { _ in
                try Shop.createTables()
                let alfki = try Shop.customer("ALFKI", "Alfreds")
                let order = try Shop.order(for: "ALFKI")
                let payment = ShopPayment()
                payment.orderId = try requireID(order)
                try await payment.save()
                let refund = ShopRefund()
                refund.paymentId = payment.paymentId
                try await refund.save()
                let customer = try await order.customer.get()
                #expect(customer?.code == "ALFKI")
                let orders = try await alfki.orders.all()
                #expect(orders.map(\.id) == [order.id])
                #expect(try await alfki.orders.count() == 1)
                let paid = try await refund.payment.get()
                #expect(paid?.paymentId == payment.paymentId)
                let refunds = try await payment.refunds.all()
                #expect(refunds.count == 1)
                #expect(try await alfki.profile.get() == nil)
            }
        }
    }

    // MARK: Eager loading

    /// `n` customers with TEXT codes; customer i has i % 3 orders (plus one anonymous order
    /// per 7 customers), a profile for even i, and each order one payment with a refund for
    /// odd orders.
    static func populateShop(customers n: Int) throws -> [String] {
        try Shop.createTables()
        let db = try #require(ShopCustomer.database)
        var codes: [String] = []
        try db.transaction {
            for i in 0..<n {
                let code = String(format: "C%04d", n - i)   // codes sort against insertion order
                codes.append(code)
                try Shop.customer(code, "Customer \(i)")
                if i % 2 == 0 {
                    let profile = ShopCustomerProfile()
                    profile.customerCode = code
                    profile.newsletter = i % 4 == 0
                    try profile.save()
                }
                for _ in 0..<(i % 3) {
                    let order = try Shop.order(for: code)
                    let payment = ShopPayment()
                    payment.orderId = try requireID(order)
                    payment.amountCents = i
                    try payment.save()
                    if try requireID(order) % 2 == 1 {
                        let refund = ShopRefund()
                        refund.paymentId = payment.paymentId
                        try refund.save()
                    }
                }
                if i % 7 == 0 { try Shop.order(for: nil) }
            }
        }
        return codes
    }

    @Test(arguments: [1, 10, 500])
    func includingLoadsEveryKindInTwoQueries(n: Int) throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            let codes = try Self.populateShop(customers: n)

            // has-many over a TEXT key.
            let (customers, hasMany) = try recorder.recording { try ShopCustomer.all.including(\.orders).all() }
            #expect(selectStatements(hasMany).count == 2, "\(hasMany)")
            #expect(customers.count == n)
            let (ordersByCustomer, reads) = try recorder.recording {
                try customers.map { try $0.orders.all().map(\.customerCode) }
            }
            #expect(reads.isEmpty, "reading preloaded children ran \(reads)")
            for (customer, orders) in zip(customers, ordersByCustomer) {
                #expect(orders.allSatisfy { $0 == customer.code })
                let index = try #require(codes.firstIndex(of: customer.code))
                #expect(orders.count == index % 3)
            }
            let preloadedCounts = try customers.map { try $0.orders.count() }
            let countedCounts = try customers.map { try $0.orders.query.count() }
            #expect(preloadedCounts == countedCounts)

            // has-one over a non-optional TEXT key.
            let (withProfiles, hasOne) = try recorder.recording { try ShopCustomer.all.including(\.profile).all() }
            #expect(selectStatements(hasOne).count == 2, "\(hasOne)")
            let (profiles, profileReads) = try recorder.recording { try withProfiles.map { try $0.profile.get()?.customerCode } }
            #expect(profileReads.isEmpty)
            for (customer, profile) in zip(withProfiles, profiles) {
                let index = try #require(codes.firstIndex(of: customer.code))
                #expect(profile == (index % 2 == 0 ? customer.code : nil))
            }

            // belongs-to over an optional TEXT key, NULLs included.
            let (orders, belongsTo) = try recorder.recording { try ShopOrder.all.including(\.customer).all() }
            #expect(selectStatements(belongsTo).count == (orders.contains { $0.customerCode != nil } ? 2 : 1), "\(belongsTo)")
            let (owners, ownerReads) = try recorder.recording { try orders.map { try $0.customer.get()?.code } }
            #expect(ownerReads.isEmpty)
            #expect(owners == orders.map(\.customerCode))
            #expect(owners.contains(nil))

            // Over UUID keys, both ways.
            let (payments, uuidHasMany) = try recorder.recording { try ShopPayment.all.including(\.refunds).all() }
            #expect(selectStatements(uuidHasMany).count == (payments.isEmpty ? 1 : 2), "\(uuidHasMany)")
            for payment in payments {
                let refunds = try payment.refunds.all()
                #expect(refunds.count == ((payment.orderId % 2 == 1) ? 1 : 0))
                #expect(refunds.allSatisfy { $0.paymentId == payment.paymentId })
            }
            let (refunds, uuidBelongsTo) = try recorder.recording { try ShopRefund.all.including(\.payment).all() }
            #expect(selectStatements(uuidBelongsTo).count == (refunds.isEmpty ? 1 : 2), "\(uuidBelongsTo)")
            let (paid, paidReads) = try recorder.recording { try refunds.map { try $0.payment.get()?.paymentId } }
            #expect(paidReads.isEmpty)
            #expect(paid == refunds.map(\.paymentId))
        }
    }

    @Test(arguments: [1, 10, 500])
    func includingOverInt64KeysInTwoQueries(n: Int) throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Music.createTables()
            try db.transaction {
                for i in 0..<n {
                    let artist = MusicArtist()
                    artist.name = "Artist \(i)"
                    try artist.save()
                    for j in 0..<(i % 3) {
                        let album = MusicAlbum()
                        album.artistId = try requireID(artist)
                        album.title = "Album \(i).\(j)"
                        try album.save()
                    }
                }
            }
            let (artists, statements) = try recorder.recording { try MusicArtist.all.including(\.albums).all() }
            #expect(selectStatements(statements).count == 2)
            let (titles, reads) = try recorder.recording { try artists.map { try $0.albums.all().map(\.title) } }
            #expect(reads.isEmpty)
            for (i, albums) in titles.enumerated() {
                #expect(albums == (0..<(i % 3)).map { "Album \(i).\($0)" })
            }
            let (albums, parents) = try recorder.recording { try MusicAlbum.all.including(\.artist).all() }
            #expect(selectStatements(parents).count == (albums.isEmpty ? 1 : 2))
            for album in albums {
                #expect(try album.artist.get()?.id == album.artistId)
            }
        }
    }

    @Test func aChangedKeyAfterIncludingLoadsTheNewParent() throws {
        try withModelDB { _ in
            try Shop.createTables()
            try Shop.customer("ALFKI", "Alfreds")
            try Shop.customer("ANTON", "Antonio")
            try Shop.order(for: "ALFKI")
            let order = try #require(try ShopOrder.all.including(\.customer).all().first)
            #expect(try order.customer.get()?.name == "Alfreds")
            order.customerCode = "ANTON"
            #expect(try order.customer.get()?.name == "Antonio")
        }
    }

    // MARK: A Date key

    @Test func aDateNaturalKeyIsReferencedWithTheDatabasesDateStrategy() throws {
        var options = Database.Options()
        options.dateStrategy = .unixSeconds
        let db = try Database.inMemory(options: options)
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            try DatedBatch.createTable()
            try DatedSample.createTable()
            let batch = DatedBatch()
            batch.startedAt = Date(timeIntervalSince1970: 1_700_000_000)
            try batch.save()
            let sample = DatedSample()
            sample.reading = 42
            try batch.samples.add(sample)
            let stored: Int64? = try db.scalar("SELECT batchStart FROM dated_sample")
            #expect(stored == 1_700_000_000)
            #expect(try batch.samples.all().map(\.reading) == [42])
            #expect(try sample.batch.get()?.startedAt == batch.startedAt)
            #expect(try DatedBatch.all.including(\.samples).all().first?.samples.count() == 1)
        }
    }
}

/// A natural key of type Date, referenced by a child (aDateNaturalKeyIsReferencedWithTheDatabasesDateStrategy).
final class DatedBatch: ModelTestRecord {
    override class var primaryKey: String { "startedAt" }
    @Column var startedAt: Date = Date(timeIntervalSince1970: 0)
    var samples: HasMany<DatedSample> { hasMany(\.$batchStart) }
}

final class DatedSample: ModelTestRecord {
    @Column(references: DatedBatch.self) var batchStart: Date? = nil
    @Column var reading: Int = 0
    var batch: BelongsTo<DatedBatch> { belongsTo(\.$batchStart) }
}
