import ActiveObjects
let db = try Database.inMemory()
try db.execute("CREATE TABLE t(x)")
print("ok")
