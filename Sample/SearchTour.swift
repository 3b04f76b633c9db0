// Full-text search over a model's columns, and a database view read through a read-only model.
import ActiveObjects
import Foundation

/// A recipe whose name and instructions are searchable.
final class Recipe: ActiveObject {
    @Column var name = ""
    @Column var instructions = ""
    @Column var minutes = 0
    override class var searchableColumns: [String] { ["name", "instructions"] }
}

/// A view over the recipes: read-only.
final class QuickRecipe: ActiveObject {
    override class var tableName: String { "Quick Recipes" }
    override class var isReadOnly: Bool { true }
    @Column("Name") var name = ""
    @Column("Minutes") var minutes = 0
}

func runSearchTour() throws {
    section("Full-text search")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("activeobjects-search-tour-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let db = try Database(path: folder.appendingPathComponent("recipes.sqlite").path)
    let previous = ActiveObject.defaultDatabase
    ActiveObject.defaultDatabase = db
    defer { ActiveObject.defaultDatabase = previous }

    try Recipe.createTable()
    for (name, instructions, minutes) in [
        ("Crème brûlée", "Bake the custard slowly, then caramelize the sugar.", 90),
        ("Quick omelette", "Whisk eggs, cook in butter, fold.", 5),
        ("Sugar cookies", "Cream butter and sugar, bake 10 minutes.", 25),
    ] {
        let recipe = Recipe()
        recipe.name = name
        recipe.instructions = instructions
        recipe.minutes = minutes
        try recipe.save()
    }
    // Raw SQL writes are indexed too: the index is kept by triggers.
    try db.execute("INSERT INTO recipe (name, instructions, minutes) VALUES ('Caramel sauce', 'Melt sugar until amber.', 15)")
    print("\"creme\":", try Recipe.search("creme").all().map(\.name))
    print("\"sugar bu\" (typing):", try Recipe.search("sugar bu").all().map(\.name))
    print("\"sugar\" under 30 minutes:", try Recipe.search("sugar").where(\.$minutes < 30).all().map(\.name))
    print("operators are words:", try Recipe.search("\"sugar\" OR -eggs*").count(), "rows")

    section("A view, read-only")
    try db.execute("CREATE VIEW \"Quick Recipes\" AS SELECT name AS Name, minutes AS Minutes FROM recipe WHERE minutes <= 15")
    print("quick:", try QuickRecipe.all.order(by: \.$minutes).all().map { "\($0.name) (\($0.minutes) min)" })
    do {
        try QuickRecipe().save()
    } catch {
        print("saving a view's object:", error)
    }
}
