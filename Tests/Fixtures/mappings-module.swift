// .ci/check-generated compiles this file into the module of the models generated from
// mappings.sql. It uses the types that tables of mappings.sql are named like (`data`,
// `sendable`, `"Protocol"`, `tasks`, `rows`): it compiles only while no generated class
// shadows them.
import ActiveObjects
import Foundation

struct ShadowingCheck: Sendable, Codable, Equatable {
    var payload: Data
    var note: String
}

func shadowingCheck(_ row: Row, _ tasks: Query<TaskRecord>, _ kind: any Sendable.Type) -> Task<Int, Never> {
    Task { 1 }
}
