// Runs the checks of every real schema (RealSchemaSupport.swift) on the databases that
// `.ci/check-generated` built into the folder given as the only argument; exits 1 when any
// model or relation fails.
import Foundation
import RealChinook
import RealNorthwind
import RealSakila
import RealSchemaSupport

guard CommandLine.arguments.count == 2 else {
    print("usage: RealSchemas DATABASES_FOLDER")
    exit(2)
}
let folder = CommandLine.arguments[1]
var failures = 0
var rows = 0
for (checks, file) in [(northwindChecks(), "northwind"), (chinookChecks(), "chinook"), (sakilaChecks(), "sakila")] {
    let summary = checks.run(databasePath: "\(folder)/\(file).sqlite")
    failures += summary.failures.count
    rows += summary.rows
}
print(failures == 0 ? "every row of every table and view loaded (\(rows) rows); every relation agrees with SQL"
                    : "\(failures) failures")
exit(failures == 0 ? 0 : 1)
