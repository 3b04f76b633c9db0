import Foundation
import Testing
@testable import ActiveObjects

// Schema builds of one class on several threads (item 2 of the hardening issue, across
// threads). Every wait below has a timeout, so that a regression fails instead of hanging.

/// A stored property initialised by a query of its own class, run on another thread and
/// awaited. Before the builds were coordinated, the helper thread started a build of its own,
/// whose prototype's init spawned another helper, and so on (32,000 threads until the OS
/// refused more): the counter below bounds that chain so that the test fails fast instead.
final class CrossThreadSelfQuery: ModelTestRecord {
    @Column var name = ""
    var helperOutcome: String = CrossThreadSelfQuery.countOnAnotherThread()

    /// How many helper threads the prototypes' inits started.
    static let helpersStarted = Locked(0)
    /// What each helper's query gave, in the order they finished.
    static let outcomes = Locked<[String]>([])

    static func countOnAnotherThread() -> String {
        guard helpersStarted.withLock({ count -> Bool in count += 1; return count <= 3 }) else {
            return "not started"
        }
        let outcome = Locked("timed out")
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result: String
            do {
                result = "counted \(try CrossThreadSelfQuery.countAll())"
            } catch {
                result = "\(error)"
            }
            outcome.withLock { $0 = result }
            outcomes.withLock { $0.append(result) }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 15)
        return outcome.current
    }
}

/// A model whose prototype takes a while to create, and counts how often it was created.
final class SlowFirstUse: ModelTestRecord {
    @Column var name = ""
    var slow: Int = SlowFirstUse.createdSlowly()

    static let inits = Locked(0)

    static func createdSlowly() -> Int {
        inits.withLock { $0 += 1 }
        Thread.sleep(forTimeInterval: 0.2)
        return 0
    }
}

/// Two threads that must both have reached a point before either goes on (each waits at most
/// 5 s), passed once: later calls return at once.
final class Rendezvous: @unchecked Sendable {
    // Safety: `arrived` and `passed` are only touched while `condition` is held.
    private let condition = NSCondition()
    private var arrived = 0
    private var passed = false

    /// Whether the other thread arrived in time (true after the first rendezvous).
    func meet() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if passed { return true }
        arrived += 1
        if arrived == 2 {
            passed = true
            condition.broadcast()
            return true
        }
        let deadline = Date(timeIntervalSinceNow: 5)
        while !passed {
            if !condition.wait(until: deadline) { return passed }
        }
        return true
    }
}

/// Models whose inits use each other, for builds started on two threads at once: each
/// prototype's init waits until both builds are under way, then needs the other class.
enum MutualFirstUse {
    static let bothStarted = Rendezvous()
}

final class MutualFirstUseA: ModelTestRecord {
    @Column var name = ""
    var sawB: Bool = {
        _ = MutualFirstUse.bothStarted.meet()
        return (try? ModelSchema.of(MutualFirstUseB.self)) != nil
    }()
}

final class MutualFirstUseB: ModelTestRecord {
    @Column var label = ""
    var sawA: Bool = {
        _ = MutualFirstUse.bothStarted.meet()
        return (try? ModelSchema.of(MutualFirstUseA.self)) != nil
    }()
}

/// Runs `body` on `count` new threads at once and returns their results (nil for a thread
/// that did not finish within `timeout` seconds).
func onThreads<T: Sendable>(_ count: Int, timeout: TimeInterval = 15,
                            _ body: @escaping @Sendable (Int) -> T) -> [T?] {
    let results = Locked<[T?]>(Array(repeating: nil, count: count))
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread.detachNewThread {
            start.wait()
            let result = body(index)
            results.withLock { $0[index] = result }
            done.leave()
        }
    }
    for _ in 0..<count { start.signal() }
    _ = done.wait(timeout: .now() + timeout)
    return results.current
}

/// The builds of one class are coordinated across threads: one builds, the others wait for
/// it, within a bound.
@Suite struct SchemaBuildConcurrencyTests {
    @Test func aQueryOfTheClassOnAnotherThreadDuringItsBuildFailsInsteadOfRecursing() throws {
        let started = Date()
        let schema = try ModelSchema.of(CrossThreadSelfQuery.self)
        let elapsed = Date().timeIntervalSince(started)
        #expect(schema.columns.map(\.name) == ["name"])
        // One helper only: it waited for the build in progress instead of starting another…
        #expect(CrossThreadSelfQuery.helpersStarted.current == 1)
        // …within the bound, and then got a clear invalidModel.
        let outcomes = CrossThreadSelfQuery.outcomes.current
        #expect(outcomes.count == 1)
        let outcome = outcomes.first ?? ""
        #expect(outcome.contains("CrossThreadSelfQuery"), "\(outcome)")
        #expect(outcome.contains("another thread"), "\(outcome)")
        #expect((schema.prototype as? CrossThreadSelfQuery)?.helperOutcome == outcome)
        #expect(elapsed < ModelSchema.buildWaitLimit + 5)
        // The class works afterwards, on any thread.
        try withModelDB { _ in
            try CrossThreadSelfQuery.createTable()
            #expect(try CrossThreadSelfQuery.countAll() == 0)
        }
        let later = onThreads(2) { _ in (try? ModelSchema.of(CrossThreadSelfQuery.self)) === schema }
        #expect(later == [true, true])
    }

    @Test func threadsThatTouchAClassFirstTogetherShareOneBuild() throws {
        let schemas = onThreads(4) { _ in try? ModelSchema.of(SlowFirstUse.self) }.compactMap { $0 ?? nil }
        #expect(schemas.count == 4)
        #expect(Set(schemas.map(ObjectIdentifier.init)).count == 1)
        // One prototype was created: the three other threads waited for it.
        #expect(SlowFirstUse.inits.current == 1)
    }

    @Test func classesWhoseInitsUseEachOtherBuildOnTwoThreadsWithoutWaitingOutTheBound() throws {
        let started = Date()
        let built = onThreads(2) { index -> Bool in
            index == 0 ? (try? ModelSchema.of(MutualFirstUseA.self)) != nil
                       : (try? ModelSchema.of(MutualFirstUseB.self)) != nil
        }
        #expect(built == [true, true])
        // Each build needed the other while both were under way: a thread that would wait for
        // a thread waiting for it builds the class itself instead (no deadlock to time out).
        #expect(Date().timeIntervalSince(started) < ModelSchema.buildWaitLimit)
        #expect(try ModelSchema.of(MutualFirstUseA.self).columns.map(\.name) == ["name"])
        #expect(try ModelSchema.of(MutualFirstUseB.self).columns.map(\.name) == ["label"])
    }
}
