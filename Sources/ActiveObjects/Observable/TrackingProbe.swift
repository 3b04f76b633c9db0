import CActiveObjectsSupport
import Dispatch
import Foundation
import Observation

/// Answers, in a few instructions, the question every `@Column` getter asks: is this thread
/// inside an observation-tracking scope (`withObservationTracking`, a SwiftUI body, an
/// `Observations` sequence), so that the read must be registered?
///
/// Registering a read (`ObservationRegistrar.access`) costs about 25 ns, and a fetched row's
/// properties are read by the million: asked unconditionally, observability would make every
/// read several times slower than a stored property's. The Observation runtime does know the
/// answer, in a per-thread pointer that is non-null exactly while a tracking scope runs on the
/// thread, but does not publish it. So the library learns, once per process, where that
/// pointer lives, and reads it directly (inlined C, `activeobjects_observation_may_be_tracking`):
///
/// - **Candidates** — on Linux every word of every thread-local block of the process's modules
///   (`dl_iterate_phdr`); on Apple platforms the thread-specific-data keys reserved for the
///   Swift runtime.
/// - **Evidence** — on a thread of its own, where no user scope can be open: the pointer is
///   null outside `withObservationTracking`; inside, it points into the thread's stack, just
///   above the closure's frame; a nested scope points it elsewhere; the list it points to goes
///   from empty to non-empty when an observable's registrar records an access; and it is null
///   again after the scope. Exactly one candidate must show all of this, and the address the
///   inlined reader computes must be the one observed; otherwise nothing is published.
///
/// Until the location is published (the first reads of a process, a few milliseconds), and
/// forever if it cannot be found (another runtime's layout), the answer is "maybe": the getter
/// then registers the read through the registrar, which is always correct, only slower.
/// ``state`` tells which; a test asserts that it is `.located` on the platforms CI runs.
@usableFromInline
enum TrackingProbe {
    /// False only when this thread is certainly not inside an observation-tracking scope.
    @inlinable
    static var mayBeTracking: Bool { activeobjects_observation_may_be_tracking() != 0 }

    /// The slow path's answer, after ``mayBeTracking`` said "maybe": lets a search in progress
    /// finish first (see ``settleIfSearching(timeout:)``), then asks again; true when the read
    /// must be registered.
    static var isTrackingAfterSettling: Bool {
        settleIfSearching()
        return mayBeTracking
    }

    /// Where the probe stands.
    enum State: Int {
        /// Not looked for yet.
        case unknown = 0
        /// Being looked for (on a background thread).
        case locating = 1
        /// Found and published: unobserved reads cost a few instructions.
        case located = 2
        /// Not found: every read is registered through the registrar (correct, slower).
        case unavailable = 3
    }

    private static let stateWord = AtomicWord(State.unknown.rawValue)

    /// Where the probe stands now.
    static var state: State { State(rawValue: stateWord.value) ?? .unavailable }

    /// Whether the located pointer is read at a fixed distance from the thread pointer (two
    /// instructions) rather than through the thread-local-storage resolver (Linux).
    static var readsAtAFixedDistance: Bool {
        #if os(Linux)
        return activeobjects_observation_reads_at_fixed_distance() != 0
        #else
        return state == .located
        #endif
    }

    /// Signalled when the search ends.
    private static let settled = DispatchSemaphore(value: 0)

    /// Starts looking for the location, once per process, on a thread of its own (where no
    /// tracking scope of the caller can be open). Called when a `Database` opens, so that the
    /// search is normally over before the first read.
    static func locateIfNeeded() {
        guard stateWord.value == State.unknown.rawValue,
              stateWord.compareExchange(expected: State.unknown.rawValue, desired: State.locating.rawValue) else { return }
        Thread.detachNewThread {
            let found = locate()
            if let found { activeobjects_observation_candidate_publish(found) }
            stateWord.store((found == nil ? State.unavailable : .located).rawValue)
            settled.signal()
        }
    }

    /// Called by a read that could not be answered in a few instructions: while the search
    /// runs (the first reads of a process that opened no database yet), waits for it, at most
    /// `timeout` seconds (a search takes about a millisecond), so that a process does not
    /// begin by registering every read. Never waits once the search is over.
    static func settleIfSearching(timeout: Double = 0.25) {
        guard state == .unknown || state == .locating else { return }
        locateIfNeeded()
        if settled.wait(timeout: .now() + timeout) == .success { settled.signal() }
    }

    /// Waits until the location is found or known to be unavailable, at most `timeout`
    /// seconds, and returns the state then (tests and the benchmark).
    static func waitUntilSettled(timeout: Double = 10) -> State {
        settleIfSearching(timeout: timeout)
        return state
    }

    /// The one candidate that behaves as the tracking pointer on this thread, or nil.
    private static func locate() -> Int? {
        // The Observation runtime's thread-local block exists once it has been used here.
        withObservationTracking { _ = 0 } onChange: {}
        let count = Int(activeobjects_observation_candidates_prepare())
        guard count > 0 else { return nil }
        let read = { (candidate: Int) in UInt(activeobjects_observation_candidate_read(candidate)) }
        let stackTop = UInt(activeobjects_current_stack_top())
        guard stackTop != 0 else { return nil }

        // Null outside any scope.
        var candidates = (0..<count).filter { read($0) == 0 }
        let subject = ProbeSubject()
        withObservationTracking {
            var marker = 0
            let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
            // Inside: a pointer into this thread's stack, above this frame, to an empty list.
            let inside = Dictionary(uniqueKeysWithValues: candidates.map { ($0, read($0)) })
            candidates = candidates.filter { candidate in
                let value = inside[candidate]!
                guard value > here, value < stackTop, value % UInt(MemoryLayout<UInt>.alignment) == 0 else { return false }
                return UnsafePointer<UInt>(bitPattern: value)!.pointee == 0
            }
            // A nested scope points it at its own list, elsewhere.
            var nested: [Int: UInt] = [:]
            withObservationTracking {
                nested = Dictionary(uniqueKeysWithValues: candidates.map { ($0, read($0)) })
            } onChange: {}
            candidates = candidates.filter { nested[$0] != 0 && nested[$0] != inside[$0] && read($0) == inside[$0] }
            // Recording an access fills the list it points to.
            subject.registrar.access(subject, keyPath: \.value)
            candidates = candidates.filter { UnsafePointer<UInt>(bitPattern: inside[$0]!)!.pointee != 0 }
        } onChange: {}
        // Null again after the scope.
        candidates = candidates.filter { read($0) == 0 }
        guard candidates.count == 1, activeobjects_observation_candidate_verify(candidates[0]) != 0 else { return nil }
        return candidates[0]
    }

    /// The observable the calibration records an access of.
    private final class ProbeSubject: Observable, @unchecked Sendable {
        // Safety of @unchecked Sendable: immutable; used on one thread.
        let registrar = ObservationRegistrar()
        let value = 0
    }
}
