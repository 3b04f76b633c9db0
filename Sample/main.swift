import ActiveObjects
import Foundation

final class Group: ActiveObject {
    @Column var name = ""
}
enum Mood: String { case happy, sad }
extension Mood: ColumnValue {}

final class Person: ActiveObject {
    @Column var name: String = ""
    @Column var age: Int = 0
    @Column var income: Double = 0
    @Column var active: Bool = true
    @Column var rating: Double? = nil
    @Column var birthdate: Date? = nil
    @Column("photo_data") var photo: Data? = nil
    @Column var mood: Mood = .happy
    @JSONColumn var tags: [String] = []
    @Column(references: Group.self, onDelete: .cascade) var groupId: Int64? = nil
    var scratch = 0
}

let db = try Database.inMemory()
ActiveObject.defaultDatabase = db
try Group.createTable()
try Person.createTable()
let p = Person(); p.name = "Joe"; p.age = 30; p.tags = ["a", "b"]
try p.save()
print(p, p.hasChanges)
p.age = 31
print(p.changedColumns)
try p.save()
let q = Person(); q.name = "Ann"; q.age = 25; q.mood = .sad
try q.save()
print(try Person.findAll())
print(try Person.find(where: ["age": [30, 31], "rating": nil]))
print(try Person.where(\.$age > 26 && \.$name == "Joe").all())
print(try Person.where(\.$name, .like("A%")).order(by: \.$age, .descending).pluck(\.$name))
print(try Person.countAll(), try Person.all.sum(\.$age), try Person.all.average(\.$age) ?? 0)
do { _ = try Person.find(where: ["nmae": 1]) } catch { print(error) }
try db.execute("UPDATE person SET age = 'abc' WHERE id = 1")
do { _ = try Person.findAll() } catch { print(error) }
