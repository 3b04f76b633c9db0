// Column roles: creation and change dates, soft delete, optimistic locking; and a column
// renamed without losing its values.
import ActiveObjects
import Foundation

/// Version 1 of an article, as an earlier release of an app shipped it.
final class ArticleV1: ActiveObject {
    override class var tableName: String { "article" }
    @Column var headline = ""
}

/// Version 2: `headline` became `title`, and the library keeps the dates, the bin and the version.
final class Article: ActiveObject {
    @Column(renamedFrom: "headline") var title = ""
    @Column(role: .createdAt) var createdAt: Date? = nil
    @Column(role: .updatedAt) var updatedAt: Date? = nil
    @Column(role: .deletedAt) var deletedAt: Date? = nil
    @Column(role: .lockVersion) var lockVersion = 0
}

func runRolesTour() throws {
    section("Renaming a column, and previewing a migration")
    let db = try Database.inMemory()
    try ArticleV1.createTable(in: db)
    try db.execute("INSERT INTO article (headline) VALUES ('Written by version 1')")
    let plan = try Article.schemaPlan(in: db)
    print("the plan:\n  " + plan.joined(separator: "\n  "))
    try Article.createTable(in: db)
    print("still there:", try db.rows("SELECT title FROM article").map { try $0["title"] as String })
    print("plan after:", try Article.schemaPlan(in: db))

    section("Creation and change dates")
    let previous = ActiveObject.defaultDatabase
    ActiveObject.defaultDatabase = db
    defer { ActiveObject.defaultDatabase = previous }
    let article = Article()
    article.title = "Roles"
    try article.save()
    print("created:", article.createdAt!, "| updated:", article.updatedAt!)
    let imported = Article()
    imported.title = "Imported"
    imported.createdAt = Date(timeIntervalSince1970: 1_000_000_000)
    imported.updatedAt = imported.createdAt
    try ActiveObject.withoutTimestamps { try imported.save() }
    print("imported keeps its dates:", imported.updatedAt!)

    section("Soft delete")
    try article.delete()
    print("visible:", try Article.countAll(), "| in the bin:", try Article.all.onlyDeleted().count(),
          "| everything:", try Article.all.withDeleted().count())
    try article.restore()
    print("restored; visible:", try Article.countAll())

    section("Optimistic locking")
    let mine = try Article.find(id: imported.id!)!
    let theirs = try Article.find(id: imported.id!)!
    theirs.title = "Their edit"
    try theirs.save()
    mine.title = "My edit"
    do {
        try mine.save()
    } catch ActiveObjectError.staleObject(let table, let key) {
        print("stale: \(table) \(key) changed since it was loaded; nothing written")
        try mine.reload()
        mine.title = "My edit, on top of theirs"
        try mine.save()
        print("saved after reload, version", mine.lockVersion)
    }
}
