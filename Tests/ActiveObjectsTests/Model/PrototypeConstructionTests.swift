import Foundation
import Testing
@testable import ActiveObjects
import CActiveObjectsSupport

/// The flag that tells the wrapper initializers they initialize a class's prototype, and the
/// record of what they declare while it is created.
@Suite struct PrototypeConstructionTests {
    final class Host: ModelTestRecord {
        @Column var name = ""
        @Column("explicit_age", indexed: true) var age = 0
        @JSONColumn var tags: [String] = []
    }

    final class Guest: ModelTestRecord {
        @Column var label = ""
    }

    /// The declarations among `events`.
    func declarations(_ events: [PrototypeEvent]) -> [ColumnDeclaration] {
        events.compactMap { if case .declaration(let declaration) = $0 { declaration } else { nil } }
    }

    /// The objects among `events`.
    func objects(_ events: [PrototypeEvent]) -> [ActiveObject] {
        events.compactMap { if case .object(let object) = $0 { object } else { nil } }
    }

    @Test func ordinaryObjectsRecordNothing() throws {
        #expect(!PrototypeConstruction.isActive)
        let host = Host()
        #expect(host.edits == nil && host.assignmentBookkeeping == 0)
        #expect(MemoryLayout<Column<Int>>.size == MemoryLayout<Int>.size, "a wrapper is its value")
        #expect(MemoryLayout<JSONColumn<[String]>>.size == MemoryLayout<[String]>.size)
    }

    @Test func thePrototypeRecordsEachDeclarationOnceThenItself() throws {
        let (prototype, events) = PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            build.makePrototype {
                #expect(PrototypeConstruction.isActive)
                return Host()
            }
        }
        #expect(!PrototypeConstruction.isActive)
        let recorded = declarations(events)
        #expect(recorded.count == 3)
        #expect(events.count == 4)
        guard case .object(let last)? = events.last else {
            Issue.record("the prototype's completion is not the last event")
            return
        }
        #expect(last === prototype)
        #expect(recorded[1].options.name == "explicit_age")
        #expect(recorded[1].options.indexed)
        #expect(recorded.map { "\($0.wrapperType)" } == ["Column<String>", "Column<Int>", "JSONColumn<Array<String>>"])
        // The place of each declaration, in declaration order.
        #expect(recorded.allSatisfy { $0.place.file.hasSuffix("PrototypeConstructionTests.swift") })
        #expect(recorded.map(\.place.line) == recorded.map(\.place.line).sorted())
        #expect(Set(recorded.map(\.place.line)).count == 3)
    }

    @Test func theFlagIsOffOutsideThePrototypesInitAndOnOtherThreads() throws {
        PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            // Before and after the prototype's init(), objects are ordinary.
            #expect(!PrototypeConstruction.isActive)
            _ = build.makePrototype {
                let otherThread = Locked<Bool?>(nil)
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    _ = Guest()
                    otherThread.withLock { $0 = PrototypeConstruction.isActive }
                    done.signal()
                }
                #expect(done.wait(timeout: .now() + 10) == .success)
                #expect(otherThread.current == false)
                return Host()
            }
            #expect(!PrototypeConstruction.isActive)
        }
    }

    @Test func objectsTheLibraryCreatesDuringAPrototypesInitAreNotRecorded() throws {
        let guestSchema = try ModelSchema.of(Guest.self)
        let (_, events) = PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            build.makePrototype {
                _ = guestSchema.newObject()
                #expect(PrototypeConstruction.isActive, "the suspension ends with the creation")
                return Host()
            }
        }
        #expect(declarations(events).count == 3, "nothing recorded for the library's object")
        #expect(objects(events).count == 1)
    }

    @Test func objectsUserCodeCreatesDuringAPrototypesInitClaimTheirOwnDeclarations() throws {
        try PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            let (prototype, events) = build.makePrototype {
                _ = Guest()                      // user code in an init(): recorded too
                return Host()
            }
            #expect(declarations(events).count == 4)
            #expect(objects(events).count == 2)
            let discovery = try ColumnDiscovery(prototype: prototype)
            let options = try ColumnDeclarations.options(prototype: prototype, events: events, discovery: discovery)
            #expect(options.map(\.name) == [nil, "explicit_age", nil])
        }
    }

    @Test func theBuildKeepsTheObjectsCreatedDuringThePrototypesInitUntilItEnds() throws {
        weak var dropped: Guest?
        weak var prototypeSeen: Host?
        PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            _ = Guest()                          // before the prototype's init(): not recorded
            let (prototype, events) = build.makePrototype {
                let guest = Guest()
                dropped = guest
                return Host()
            }
            prototypeSeen = prototype as? Host
            _ = Guest()                          // after it: not recorded
            #expect(dropped != nil, "kept by the build")
            #expect(objects(events).count == 2 && objects(events)[0] === dropped)
        }
        #expect(dropped == nil, "released when the build ends")
        #expect(prototypeSeen == nil)
    }

    @Test func objectsTheLibraryCreatesAndNestedPrototypesAreNotRecorded() throws {
        let guestSchema = try ModelSchema.of(Guest.self)
        PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            let (_, events) = build.makePrototype {
                _ = guestSchema.newObject()      // the library's, under a suspension
                PrototypeConstruction.withSchemaBuild(of: Guest.self) { nested in
                    let (_, inner) = nested.makePrototype { Guest() }
                    #expect(objects(inner).count == 1)
                }
                return Host()
            }
            #expect(objects(events).count == 1)
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
        let (_, outerEvents) = PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
            build.makePrototype {
                let (_, inner) = PrototypeConstruction.withSchemaBuild(of: Guest.self) { nested in
                    #expect(!PrototypeConstruction.isActive)
                    #expect(PrototypeConstruction.isBuilding(Host.self))
                    #expect(PrototypeConstruction.isBuilding(Guest.self))
                    return nested.makePrototype { Guest() }
                }
                #expect(declarations(inner).count == 1)
                #expect(PrototypeConstruction.isActive, "back to recording the outer prototype")
                return Host()
            }
        }
        #expect(declarations(outerEvents).count == 3)
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
            let (_, events) = PrototypeConstruction.withSchemaBuild(of: Host.self) { build in
                build.makePrototype {
                    let loaded = try! Guest.findAll()
                    #expect(loaded.map(\.label) == ["g"])
                    return Host()
                }
            }
            #expect(declarations(events).count == 3)
            #expect(objects(events).count == 1)
        }
    }
}
