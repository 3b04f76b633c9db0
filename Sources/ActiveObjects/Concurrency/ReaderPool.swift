import Foundation

/// The read-only connections of a WAL database, opened when first needed, up to
/// `Options.maximumReaderCount`, each with its own statement cache.
///
/// A read leases a connection, uses it, and gives it back; reads on different connections
/// run at the same time, and beside the writer (WAL lets readers keep their snapshot while
/// the writer appends). Every read starts a fresh read transaction, so it sees every commit
/// that returned before it started: read-your-writes needs nothing else (no snapshot API).
///
/// A thread gets back the idle connection it used last when there is one: its statements and
/// pages are still warm in that thread's CPU cache, and threads reading at once do not keep
/// trading connections (what one connection per thread gives hand-written code).
///
/// When every connection is leased, a read waits for one, at most the busy timeout (then
/// SQLite's `busy` error). A thread that itself holds every leased connection (nested reads
/// inside `each`, open cursors) would wait for itself forever: it gets a temporary extra
/// connection instead, closed when given back.
final class ReaderPool: @unchecked Sendable {
    // Safety of @unchecked Sendable: all mutable state is guarded by `condition`'s lock.
    // `@exclusivity(unchecked)`: the lock already serializes every access, so the runtime's
    // exclusivity checks (several per read) would only cost time.
    private let condition = NSCondition()
    /// Idle connections, and the token of the thread that used each last.
    @exclusivity(unchecked) private var idle: [Connection] = []
    @exclusivity(unchecked) private var idleHolders: [Int] = []
    /// Every open connection, leased or idle (for closing).
    @exclusivity(unchecked) private var open: [Connection] = []
    /// Connections being opened right now (counted against the maximum).
    @exclusivity(unchecked) private var opening = 0
    /// Set once ``close()`` ran; read with or without the pool's lock (reads in progress
    /// check it).
    private let shutDown = AtomicFlag()
    /// Threads waiting for a connection (signalled only when there are some).
    @exclusivity(unchecked) private var waiting = 0
    let maximumCount: Int
    private let makeConnection: () throws -> Connection

    init(maximumCount: Int, makeConnection: @escaping () throws -> Connection) {
        self.maximumCount = maximumCount
        self.makeConnection = makeConnection
    }

    /// A connection for the thread `token`; give it back with ``giveBack(_:)``.
    /// - Throws: ``ActiveObjectError/databaseClosed``; ``DatabaseError`` `busy` after waiting
    ///   `timeout` nanoseconds; the error of opening a connection (e.g. `cannotOpen`).
    func lease(token: Int, timeout: Int64) throws -> Connection {
        condition.lock()
        var deadline: Date?
        while true {
            if isShutDown {
                condition.unlock()
                throw ActiveObjectError.databaseClosed
            }
            if !idle.isEmpty {
                // This thread's last connection, or else the one given back last.
                var index = idle.count - 1
                while index > 0 && idleHolders[index] != token { index -= 1 }
                if idleHolders[index] != token { index = idle.count - 1 }
                let connection: Connection
                if index == idle.count - 1 {
                    connection = idle.removeLast()
                    idleHolders.removeLast()
                } else {
                    connection = idle.remove(at: index)
                    idleHolders.remove(at: index)
                }
                connection.leaseHolder = token
                condition.unlock()
                return connection
            }
            // Every connection is leased (none idle). A thread that already holds one (a read
            // inside `each`, or beside an open cursor) gets a temporary extra connection rather
            // than wait: threads each holding a reader and waiting for another would wait on
            // one another until the busy timeout.
            let holdsOne = open.contains { $0.leaseHolder == token }
            if open.count + opening < maximumCount || holdsOne {
                opening += 1
                condition.unlock()
                let connection: Connection
                do {
                    connection = try makeConnection()
                } catch {
                    condition.lock()
                    opening -= 1
                    if waiting > 0 { condition.signal() }
                    condition.unlock()
                    throw error
                }
                condition.lock()
                opening -= 1
                if isShutDown {
                    condition.unlock()
                    connection.closeNow()
                    throw ActiveObjectError.databaseClosed
                }
                open.append(connection)
                connection.leaseHolder = token
                condition.unlock()
                return connection
            }
            let limit = deadline ?? Date(timeIntervalSinceNow: Double(max(0, timeout)) / 1e9)
            deadline = limit
            waiting += 1
            let signalled = condition.wait(until: limit)
            waiting -= 1
            if !signalled && idle.isEmpty && !isShutDown {
                condition.unlock()
                throw DatabaseError(
                    extendedResultCode: .busy,
                    message: "all \(maximumCount) reader connections stayed in use for longer than the busy timeout")
            }
        }
    }

    /// Returns a leased connection. Connections beyond the maximum (opened for a thread that
    /// already held one) are closed; so is everything once the pool is closed.
    func giveBack(_ connection: Connection) {
        condition.lock()
        let holder = connection.leaseHolder
        connection.leaseHolder = 0
        if isShutDown || open.count > maximumCount {
            open.removeAll { $0 === connection }
            condition.unlock()
            connection.lock.withLock { connection.closeNow() }
            return
        }
        idle.append(connection)
        idleHolders.append(holder)
        if waiting > 0 { condition.signal() }
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
        let all = open
        idle.removeAll()
        idleHolders.removeAll()
        var closeLater: [Connection] = []
        for connection in all {
            // Under the pool's lock: a holder cannot give the connection back (and close it)
            // meanwhile, so interrupting it is safe.
            if connection.lock.try() {
                connection.closeNow()
                connection.lock.unlock()
            } else {
                connection.interrupt()
                closeLater.append(connection)
            }
        }
        open = closeLater
        condition.broadcast()
        condition.unlock()
    }

    /// True once ``close()`` ran.
    var isShutDown: Bool { shutDown.isSet }

    /// How many connections are open right now (tests and diagnostics).
    var openCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return open.count
    }
}
