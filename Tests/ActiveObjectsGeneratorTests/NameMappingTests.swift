import Testing
@testable import ActiveObjectsGenerator

@Suite("Generator: names")
struct NameMappingTests {
    @Test("column names become lowerCamelCase properties", arguments: [
        ("first_name", "firstName"), ("FIRST_NAME", "firstName"), ("name", "name"),
        ("groupId", "groupId"), ("artistID", "artistID"), ("URLValue", "urlValue"),
        ("e-mail", "eMail"), ("first name", "firstName"), ("_rev", "rev"), ("group_ID", "groupId"),
        ("address2", "address2"),
    ])
    func lowerCamel(column: String, property: String) {
        #expect(SwiftNames.lowerCamel(column) == property)
    }

    @Test("names without any usable character map to nil")
    func unusableIdentifiers() {
        #expect(SwiftNames.lowerCamel("€") == nil)
        #expect(SwiftNames.lowerCamel("_") == nil)
        #expect(SwiftNames.className(forTable: "---") == nil)
    }

    @Test("table names become singular UpperCamelCase classes", arguments: [
        ("people", "Person"), ("groups", "Group"), ("categories", "Category"), ("blog_posts", "BlogPost"),
        ("BlogPosts", "BlogPost"), ("PEOPLE", "Person"), ("addresses", "Address"), ("boxes", "Box"),
        ("statuses", "Status"), ("news", "News"), ("person", "Person"), ("class", "Class"),
        ("movies", "Movie"), ("user_settings", "UserSettings"), ("children", "Child"),
    ])
    func className(table: String, className: String) {
        #expect(SwiftNames.className(forTable: table) == className)
    }

    @Test("plurals name has-many relations", arguments: [
        ("person", "people"), ("category", "categories"), ("address", "addresses"), ("group", "groups"),
        ("day", "days"), ("box", "boxes"), ("blogPost", "blogPosts"), ("status", "statuses"),
    ])
    func plural(singular: String, plural: String) {
        #expect(Inflection.plural(singular) == plural)
    }

    @Test("Swift keywords are escaped with backticks; other names are not")
    func keywords() {
        #expect(SwiftNames.escaped("default") == "`default`")
        #expect(SwiftNames.escaped("class") == "`class`")
        #expect(SwiftNames.escaped("where") == "`where`")
        #expect(SwiftNames.escaped("order") == "order")
        #expect(SwiftNames.escaped("name") == "name")
    }
}
