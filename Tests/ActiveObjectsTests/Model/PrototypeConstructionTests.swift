import Foundation
import Testing
@testable import ActiveObjects
import CActiveObjectsSupport

/// The flag that gives a class's prototype — and only it — its column declarations, and the
/// record of what the wrapper initializers created.
@Suite struct PrototypeConstructionTests {
    final class Host: ModelTestRecord {
        @Column var name = ""
        @Column("explicit_age", indexed: true) var age = 0
        @JSONColumn var tags: [String] = []
    }

    final class Guest: ModelTestRecord {
        @Column var label = ""
    }

    /// Whether every column wrapper of `object` is in the `.fresh` state of a new object.
    func isFresh(_ object: ActiveObject) throws -> Bool {
        let schema = try ModelSchema.of(type(of: object))
        return object.withUnsafeObjectPointer { base in
            schema.accessors.allSatisfy { accessor in
                if case .fresh = accessor.state(in: base) { return true }
                return false
            }
        }
    }

    /// The descriptor of each column wrapper of `object` (nil for an ordinary object's).
    func descriptors(_ object: ActiveObject) throws -> [ColumnDescriptor?] {
        let schema = try ModelSchema.of(type(of: object))
        return object.withUnsafeObjectPointer { base in schema.accessors.map { $0.state(in: base).descriptor } }
    }

    @Test func ordinaryObjectsGetFreshWrappersWithoutDeclarations() throws {
        #expect(!PrototypeConstruction.isActive)
        let host = Host()
        #expect(try isFresh(host))
        #expect(try descriptors(host).allSatisfy { $0 == nil })
    }

    @Test func thePrototypeRecordsEachDeclarationOnceInCreationOrder() throws {
        let (prototype, recorded) = PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            build.makePrototype {
                #expect(PrototypeConstruction.isActive)
                return Host()
            }
        }
        #expect(!PrototypeConstruction.isActive)
        #expect(recorded.count == 3)
        let held = try descriptors(prototype)
        #expect(held.count == 3)
        #expect(zip(held, recorded).allSatisfy { $0 === $1 })
        #expect(recorded[1].options.name == "explicit_age")
        #expect(recorded[1].options.indexed)
    }

    @Test func theFlagIsOffOutsideThePrototypesInitAndOnOtherThreads() throws {
        PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            // Before and after the prototype's init(), objects are ordinary.
            #expect(!PrototypeConstruction.isActive)
            _ = build.makePrototype {
                let otherThread = Locked<Bool?>(nil)
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    otherThread.withLock { $0 = (try? self.isFresh(Guest())) ?? false }
                    done.signal()
                }
                #expect(done.wait(timeout: .now() + 10) == .success)
                #expect(otherThread.current == true)
                return Host()
            }
            #expect(!PrototypeConstruction.isActive)
        }
    }

    @Test func objectsTheLibraryCreatesDuringAPrototypesInitAreOrdinary() throws {
        let guestSchema = try ModelSchema.of(Guest.self)
        let (_, recorded) = PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            build.makePrototype {
                let created = guestSchema.newObject()
                #expect(try! isFresh(created))
                #expect(PrototypeConstruction.isActive, "the suspension ends with the creation")
                return Host()
            }
        }
        #expect(recorded.count == 3, "nothing recorded for the library's object")
    }

    @Test func objectsUserCodeCreatesDuringAPrototypesInitAreRecordedButNotThePrototypes() throws {
        try PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            let (prototype, recorded) = build.makePrototype {
                _ = Guest()                      // user code in an init(): still recorded…
                return Host()
            }
            #expect(recorded.count == 4)
            // …but not stored in the prototype: stored in the other object the build kept.
            #expect(PrototypeColumnCheck.locate(recorded, in: prototype).count == 3)
            #expect(build.others.count == 1)
            #expect(PrototypeColumnCheck.locate(recorded, in: build.others[0]).count == 1)
            let discovery = try ColumnDiscovery(prototype: prototype)
            try PrototypeColumnCheck.verify(prototype: prototype, recorded: recorded, others: build.others,
                                            discovery: discovery)
        }
    }

    @Test func theBuildKeepsTheObjectsCreatedDuringThePrototypesInitUntilItEnds() throws {
        weak var dropped: Guest?
        weak var prototypeSeen: Host?
        PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            _ = Guest()                          // before the prototype's init(): not kept
            #expect(build.others.isEmpty)
            let (prototype, _) = build.makePrototype {
                let guest = Guest()
                dropped = guest
                return Host()
            }
            prototypeSeen = prototype as? Host
            _ = Guest()                          // after it: not kept
            #expect(dropped != nil, "kept by the build")
            #expect(build.others.count == 1 && build.others[0] === dropped)
            #expect(!build.others.contains { $0 === prototype }, "the prototype is not among the others")
        }
        #expect(dropped == nil, "released when the build ends")
        #expect(prototypeSeen == nil)
    }

    @Test func objectsTheLibraryCreatesAndNestedPrototypesAreNotKeptAsOthers() throws {
        let guestSchema = try ModelSchema.of(Guest.self)
        PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            _ = build.makePrototype {
                _ = guestSchema.newObject()      // the library's, under a suspension
                PrototypeConstruction.withSchemaBuild(of: Guest.self) { nested in
                    _ = nested.makePrototype { Guest() }
                    #expect(nested.others.isEmpty)
                }
                return Host()
            }
            #expect(build.others.isEmpty)
        }
    }

    @Test func objectsCreatedWhenNothingIsBuiltAreNotKept() {
        weak var created: Guest?
        do {
            let guest = Guest()
            created = guest
        }
        #expect(created == nil)
    }

    @Test func aNestedBuildRecordsForItsOwnClassOnly() throws {
        let (_, outer) = PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            build.makePrototype {
                let (_, inner) = PrototypeConstruction.withSchemaBuild(of: Guest.self) { nested in
                    #expect(!PrototypeConstruction.isActive)
                    #expect(PrototypeConstruction.isBuilding(Host.self))
                    #expect(PrototypeConstruction.isBuilding(Guest.self))
                    return nested.makePrototype { Guest() }
                }
                #expect(inner.count == 1)
                #expect(PrototypeConstruction.isActive, "back to recording the outer prototype")
                return Host()
            }
        }
        #expect(outer.count == 3)
        #expect(!PrototypeConstruction.isBuilding(Host.self))
    }

    @Test func theProcessWideCounterIsBackToZeroAfterABuild() throws {
        PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            _ = build.makePrototype {
                #expect(activeobjects_prototypes_in_progress_load() >= 1)
                return Host()
            }
        }
        // Other tests may be building prototypes on other threads right now: only this
        // thread's view is deterministic.
        #expect(!PrototypeConstruction.isActiveOnThisThread)
    }

    @Test func suspendedRunsItsBodyDirectlyWhenNothingIsBuilt() {
        var ran = false
        let value = PrototypeConstruction.suspended { ran = true; return 42 }
        #expect(ran && value == 42)
    }

    @Test func loaderCreatedObjectsDuringAPrototypesInitRecordNothing() throws {
        // A query in a prototype's init() (e.g. a property initialised with `Guest.findAll()`):
        // the loaded objects must be ordinary, and leave nothing in the record.
        try withModelDB { _ in
            try Guest.createTable()
            let guest = Guest()
            guest.label = "g"
            try guest.save()
            let (_, recorded) = PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
                build.makePrototype {
                    let loaded = try! Guest.findAll()
                    #expect(loaded.map(\.label) == ["g"])
                    return Host()
                }
            }
            #expect(recorded.count == 3)
        }
    }
}
