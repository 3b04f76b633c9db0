import Foundation

/// The read-only connections of a WAL database, opened when first needed, up to
/// `Options.maximumReaderCount`, each with its own statement cache.
///
/// A read leases a connection, uses it, and gives it back; reads on different connections
/// run at the same time, and beside the writer (WAL lets readers keep their snapshot while
/// the writer appends). Every read starts a fresh read transaction, so it sees every commit
/// that returned before it started: read-your-writes needs nothing else (no snapshot API).
///
/// **No shared lock on the way**: each connection sits in a slot whose state (idle, leased)
/// is one atomic word, so leasing an idle connection and giving it back cost a
/// compare-and-swap and a store on that slot alone — threads reading at once do not meet on a
/// common lock or cache line, which is what lets reads scale with threads as hand-written code
/// with one connection per thread does. A thread tries the slot it used last first (its
/// statements and pages are still warm in its CPU cache), then the others.
///
/// The pool's lock (`condition`) is taken only to open a connection, to wait for one when
/// every connection is leased (at most the busy timeout, then SQLite's `busy` error), to wake
/// such a waiter when a connection is given back, to retire a temporary connection, and to
/// close. A thread that itself holds a leased connection and finds none idle (nested reads
/// inside `each`, open cursors) would wait for itself forever: it gets a temporary extra
/// connection instead, closed when given back.
final class ReaderPool: @unchecked Sendable {
    // Safety of @unchecked Sendable: a slot's `connection` is written once, under `condition`'s
    // lock, before the slot's state is published as idle or leased (a release store; readers
    // load the state with acquire ordering first); `opening`, `temporaryHolders` and the
    // connections' `temporaryHolder` are guarded by `condition`'s lock; the rest are atomics or
    // immutable.

    /// One connection's place in the pool.
    private final class Slot: @unchecked Sendable {
        static let empty = 0, idle = 1, leased = 2, closed = 3
        let state = AtomicWord(Slot.empty)
        /// The ``ThreadState/token`` of the thread that leased it (0 when not leased): a thread
        /// that holds a connection and finds none idle gets a temporary one instead of waiting
        /// for itself. Any thread may give a connection back (a cursor closed elsewhere).
        let holder = AtomicWord(0)
        var connection: Connection?
    }

    private let slots: [Slot]
    private let condition = NSCondition()
    /// Connections being opened right now (counted against the maximum); under the lock.
    private var opening = 0
    /// Temporary extra connections open right now, by the token of the thread they were
    /// opened for; under the lock.
    private var temporaryHolders: [ObjectIdentifier: Int] = [:]
    /// The temporary extra connections open right now (for ``close()``); under the lock.
    private var temporaries: [ObjectIdentifier: Connection] = [:]
    /// Threads waiting for a connection (a giveBack signals only when there are some).
    private let waiting = AtomicWord(0)
    /// Set once ``close()`` ran; read with or without the pool's lock.
    private let shutDown = AtomicFlag()
    let maximumCount: Int
    private let makeConnection: () throws -> Connection

    /// The pool's number in threads' affinities (its database's serial, never reused).
    private let serial: Int

    init(maximumCount: Int, serial: Int, makeConnection: @escaping () throws -> Connection) {
        self.maximumCount = maximumCount
        self.serial = serial
        self.makeConnection = makeConnection
        slots = (0..<maximumCount).map { _ in Slot() }
    }

    /// A connection for `thread` (the calling thread); give it back with ``giveBack(_:)``.
    /// - Throws: ``ActiveObjectError/databaseClosed``; ``DatabaseError`` `busy` after waiting
    ///   `timeout` nanoseconds; the error of opening a connection (e.g. `cannotOpen`).
    @inline(__always)
    func lease(for thread: ThreadState, timeout: Int64) throws -> Connection {
        if !isShutDown, let connection = claimIdle(for: thread) { return connection }
        return try leaseSlowly(for: thread, timeout: timeout)
    }

    /// A connection for `thread` without waiting for another thread to give one back: an idle
    /// one, else a new one while fewer than the maximum are open; nil when every connection is
    /// leased (or the pool closed).
    /// - Throws: the error of opening a connection.
    func leaseWithoutWaiting(for thread: ThreadState) throws -> Connection? {
        if isShutDown { return nil }
        if let connection = claimIdle(for: thread) { return connection }
        condition.lock()
        if isShutDown {
            condition.unlock()
            return nil
        }
        if let connection = claimIdle(for: thread) {
            condition.unlock()
            return connection
        }
        let filled = slots.firstIndex { $0.state.value == Slot.empty } ?? slots.count
        guard filled + opening < maximumCount else {
            condition.unlock()
            return nil
        }
        return try open(for: thread, temporary: false)
    }

    /// Claims an idle slot without the pool's lock: the slot `thread` used last, then the
    /// others in order.
    @inline(__always)
    private func claimIdle(for thread: ThreadState) -> Connection? {
        let entry = affinityEntry(of: thread)
        let preferred = thread.readerAffinity[entry].slot
        if preferred < slots.count, slots[preferred].state.compareExchange(expected: Slot.idle, desired: Slot.leased) {
            slots[preferred].holder.store(thread.token)
            return slots[preferred].connection
        }
        for index in slots.indices where index != preferred {
            if slots[index].state.compareExchange(expected: Slot.idle, desired: Slot.leased) {
                slots[index].holder.store(thread.token)
                thread.readerAffinity[entry].slot = index
                return slots[index].connection
            }
        }
        return nil
    }

    /// The index of this pool's entry in `thread`'s affinities, added on first use (the
    /// oldest entry goes when the thread remembers too many pools).
    @inline(__always)
    private func affinityEntry(of thread: ThreadState) -> Int {
        let serial = serial
        if let index = thread.readerAffinity.lastIndex(where: { $0.pool == serial }) { return index }
        if thread.readerAffinity.count >= ThreadState.rememberedDatabases { thread.readerAffinity.removeFirst() }
        thread.readerAffinity.append((serial, 0))
        return thread.readerAffinity.count - 1
    }

    /// Whether `thread` holds a connection of this pool (under the lock).
    private func isHolding(_ thread: ThreadState) -> Bool {
        let token = thread.token
        return temporaryHolders[thread.identity, default: 0] > 0
            || slots.contains { $0.state.value == Slot.leased && $0.holder.value == token }
    }

    /// No idle connection: open one (below the maximum, or a temporary extra for a thread that
    /// holds one already), or wait for one to be given back.
    private func leaseSlowly(for thread: ThreadState, timeout: Int64) throws -> Connection {
        condition.lock()
        var deadline: Date?
        while true {
            if isShutDown {
                condition.unlock()
                throw ActiveObjectError.databaseClosed
            }
            // Registered as waiting before looking again: a connection given back from now on
            // signals (the two sides' sequentially consistent store-then-load, see `giveBack`).
            waiting.add(1)
            if let connection = claimIdle(for: thread) {
                waiting.add(-1)
                condition.unlock()
                return connection
            }
            let filled = slots.firstIndex { $0.state.value == Slot.empty } ?? slots.count
            let holdsOne = isHolding(thread)
            if filled + opening < maximumCount || holdsOne {
                waiting.add(-1)
                return try open(for: thread, temporary: filled + opening >= maximumCount)
            }
            let limit = deadline ?? Date(timeIntervalSinceNow: Double(max(0, timeout)) / 1e9)
            deadline = limit
            let signalled = condition.wait(until: limit)
            waiting.add(-1)
            if !signalled && !isShutDown {
                if let connection = claimIdle(for: thread) {
                    condition.unlock()
                    return connection
                }
                condition.unlock()
                throw DatabaseError(
                    extendedResultCode: .busy,
                    message: "all \(maximumCount) reader connections stayed in use for longer than the busy timeout")
            }
        }
    }

    /// Opens a connection for `thread` (called with the lock held; returns with it released):
    /// into the first empty slot, or as a temporary extra.
    private func open(for thread: ThreadState, temporary: Bool) throws -> Connection {
        opening += 1
        condition.unlock()
        let connection: Connection
        do {
            connection = try makeConnection()
        } catch {
            condition.lock()
            opening -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
        condition.lock()
        defer { condition.unlock() }
        opening -= 1
        if isShutDown {
            connection.lock.withLock { connection.closeNow() }
            throw ActiveObjectError.databaseClosed
        }
        if !temporary, let index = slots.firstIndex(where: { $0.state.value == Slot.empty }) {
            slots[index].connection = connection
            connection.readerSlot = index
            thread.readerAffinity[affinityEntry(of: thread)].slot = index
            slots[index].holder.store(thread.token)
            slots[index].state.store(Slot.leased)
        } else {
            connection.readerSlot = -1
            connection.temporaryHolder = thread.identity
            temporaryHolders[thread.identity, default: 0] += 1
            temporaries[ObjectIdentifier(connection)] = connection
        }
        return connection
    }

    /// Returns a leased connection (from any thread). Temporary extras are closed; so is
    /// everything once the pool is closed.
    @inline(__always)
    func giveBack(_ connection: Connection) {
        let index = connection.readerSlot
        guard index >= 0, !isShutDown else { return retire(connection) }
        slots[index].holder.store(0)
        slots[index].state.storeSequentiallyConsistent(Slot.idle)
        if waiting.sequentiallyConsistentValue > 0 {
            condition.lock()
            condition.signal()
            condition.unlock()
        }
    }

    /// Closes a connection given back that will not be reused: a temporary extra, or any once
    /// the pool closed. Under the pool's lock, so that ``close()`` (which interrupts
    /// connections in use under it) never meets a connection being closed.
    private func retire(_ connection: Connection) {
        condition.lock()
        if connection.readerSlot < 0 {
            temporaries[ObjectIdentifier(connection)] = nil
            if let holder = connection.temporaryHolder {
                temporaryHolders[holder, default: 1] -= 1
                if temporaryHolders[holder] == 0 { temporaryHolders[holder] = nil }
                connection.temporaryHolder = nil
            }
        } else {
            slots[connection.readerSlot].holder.store(0)
            slots[connection.readerSlot].state.store(Slot.closed)
        }
        connection.lock.withLock { connection.closeNow() }
        condition.signal()
        condition.unlock()
    }

    /// Closes every connection without waiting for user code: idle ones, and leased ones not
    /// in use right now (an open cursor between two `next()` calls: its statement is
    /// finalized), at once. A leased connection in use — a walk whose body is running, which
    /// may itself wait for the thread calling `close()` — is interrupted (its statement's next
    /// step fails) and closed by its holder when given back. Later leases throw
    /// ``ActiveObjectError/databaseClosed``.
    func close() {
        condition.lock()
        shutDown.set()
        for slot in slots {
            guard let connection = slot.connection else { continue }
            if slot.state.compareExchange(expected: Slot.idle, desired: Slot.closed) {
                connection.lock.withLock { connection.closeNow() }
            } else if connection.lock.try() {
                connection.closeNow()
                connection.lock.unlock()
                slot.state.store(Slot.closed)
            } else {
                connection.interrupt()
            }
        }
        // Temporary extras are always leased: close those not in use, interrupt the others
        // (their holders close them when they give them back).
        for connection in temporaries.values {
            if connection.lock.try() {
                connection.closeNow()
                connection.lock.unlock()
            } else {
                connection.interrupt()
            }
        }
        condition.broadcast()
        condition.unlock()
    }

    /// True once ``close()`` ran.
    var isShutDown: Bool { shutDown.isSet }

    /// How many connections are open right now (tests and diagnostics).
    var openCount: Int {
        condition.lock()
        defer { condition.unlock() }
        let inSlots = slots.filter { $0.state.value == Slot.idle || $0.state.value == Slot.leased }.count
        return inSlots + temporaryHolders.values.reduce(0, +)
    }
}
