// The round trip .ci/check-generated runs against the models generated from ormapper.sql
// (with --naming snake): create every table, save one row through each class, read it back.
import ActiveObjects
import Foundation

func check(_ condition: Bool, _ message: String) {
    if !condition {
        FileHandle.standardError.write(Data("round trip failed: \(message)\n".utf8))
        exit(1)
    }
}

let db = try Database.inMemory()
ActiveObject.defaultDatabase = db
try Group.createTable()
try Person.createTable()
try PeopleTag.createTable()
try Profile.createTable()

// Group
let group = Group()
group.name = "Admins"
group.default = true
// created_at DEFAULT CURRENT_TIMESTAMP is @Column(role: .createdAt): stamped on insert.
try group.save()
guard let groupID = group.id else { fatalError("Group.save() set no id") }
let loadedGroup = try Group.find(id: groupID)
check(loadedGroup?.name == "Admins", "Group.name")
check(loadedGroup?.default == true, "Group.default")
check(abs(group.createdAt.timeIntervalSinceNow) < 60, "Group.createdAt stamped with the current date")
check(loadedGroup.map { abs($0.createdAt.timeIntervalSince(group.createdAt)) < 0.002 } == true, "Group.createdAt")
// Inside withoutTimestamps, the value set is kept (an import).
let imported = Group()
imported.name = "Imported"
imported.createdAt = Date(timeIntervalSince1970: 1_700_000_000)
try ActiveObject.withoutTimestamps { try imported.save() }
check(try Group.find(id: imported.id!)?.createdAt == Date(timeIntervalSince1970: 1_700_000_000), "Group.createdAt as imported")

// Person, through the foreign key
let person = Person()
person.groupId = groupID
person.firstName = "Joe"
person.lastName = "Doe"
person.email = "joe@example.com"
person.age = 30
person.income = 1234.5
person.active = false
person.birthdate = Date(timeIntervalSince1970: 315_532_800)
person.photo = Data([0xCA, 0xFE])
person.order = 2
person.balance = Decimal(string: "12.34")!
try person.save()
guard let personID = person.id else { fatalError("Person.save() set no id") }
let loadedPerson = try Person.find(id: personID)
check(loadedPerson?.firstName == "Joe" && loadedPerson?.lastName == "Doe", "Person names")
check(loadedPerson?.email == "joe@example.com", "Person.email")
check(loadedPerson?.age == 30 && loadedPerson?.income == 1234.5, "Person numbers")
check(loadedPerson?.active == false, "Person.active")
check(loadedPerson?.birthdate == person.birthdate, "Person.birthdate")
check(loadedPerson?.photo == Data([0xCA, 0xFE]), "Person.photo")
check(loadedPerson?.order == 2, "Person.order")
check(loadedPerson?.balance == Decimal(string: "12.34")!, "Person.balance")

// The relations
check(try loadedPerson?.group.get()?.name == "Admins", "Person.group")
check(try group.people.count() == 1, "Group.people")
check(try group.people.all().first?.id == personID, "Group.people.all()")

// PeopleTag: a composite key (person_id, tag), found and updated by it
let tag = PeopleTag()
tag.personId = personID
tag.tag = "admin"
try tag.save()
check(tag.id != nil, "PeopleTag rowid")
let loadedTag = try PeopleTag.find(key: ["person_id": personID, "tag": "admin"])
check(loadedTag?.tag == "admin" && loadedTag?.personId == personID, "PeopleTag.find(key:)")
check(try loadedTag?.person.get()?.firstName == "Joe", "PeopleTag.person")
loadedTag?.tag = "owner"
try loadedTag?.save()
check(try PeopleTag.find(key: ["person_id": personID, "tag": "admin"]) == nil, "PeopleTag key renamed")
check(try PeopleTag.find(key: ["person_id": personID, "tag": "owner"]) != nil, "PeopleTag found by its new key")

// Profile: its key person_id is its foreign key (a one-to-one table), a @Column with relations
let profile = Profile()
profile.personId = personID
profile.bio = "Likes SQL"
try profile.save()
check(profile.id == personID, "Profile.id is its key, the rowid")
let loadedProfile = try Profile.find(key: personID)
check(loadedProfile?.bio == "Likes SQL", "Profile.find(key:)")
check(try Profile.find(id: personID)?.personId == personID, "Profile.find(id:)")
check(try loadedProfile?.person.get()?.firstName == "Joe", "Profile.person")
check(try loadedPerson?.profile.get()?.bio == "Likes SQL", "Person.profile")
let withProfiles = try Person.all.including(\.profile).all()
check(try withProfiles.first?.profile.get()?.personId == personID, "Person.all.including(\\.profile)")
check(try Person.all.joining(\.profile).count() == 1, "Person.all.joining(\\.profile)")
loadedProfile?.bio = "Likes Swift"
try loadedProfile?.save()
check(try Profile.find(key: personID)?.bio == "Likes Swift", "Profile updated by its key")
// A second person's profile, attached through the relation.
let other = Person()
other.firstName = "Ann"
try other.save()
let otherProfile = Profile()
try otherProfile.person.set(other)
try otherProfile.save()
check(try other.profile.get()?.personId == other.id, "Profile.person.set")
try other.delete()
check(try Profile.find(key: other.id!) == nil, "ON DELETE CASCADE of the profile")

print("generated models round-trip: Group #\(groupID), Person #\(personID), Profile #\(personID)")
