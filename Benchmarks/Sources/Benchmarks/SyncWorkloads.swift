import ActiveObjects
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Issue 23: sync between devices (§18).
//
// - sync-capture: the cost of change capture. 50,000 notes saved one by one in one transaction
//   (as `insert` does, and with `insertAll` as `insert-all` does) into a synchronized table —
//   whose three triggers append one entry per inserted row to the change log — vs the same into
//   a plain table; two models identical but for `isSynchronized`, a UUID key each, one WAL
//   database file each (default options). Target: synchronized ≤ 1.3 × plain.
// - sync-hub: 10,000 notes inserted on device A reach device B through a `SyncHub`: A's
//   `synchronize()` pushes them, then B's pulls them; timed from the start of A's call to the
//   end of B's. Through a real HTTP server on 127.0.0.1 (Hummingbird, `POST /sync`) with
//   `HTTPSyncTransport`, and through an in-process transport calling `hub.handle` directly
//   (the library's own cost, HTTP aside). Target (HTTP): ≤ 2 s end to end.
// - sync-idle: the CPU time the process uses while it sits idle for 2 s (getrusage), with no
//   engine, then with an engine that has synchronized 1,000 notes (in-process hub), then with
//   the HTTP server running and no engine, then with an engine synchronized through it.
//   Target: an engine adds nothing measurable (≈ 0).

let syncWorkloads = ["sync-capture", "sync-hub", "sync-idle"]

/// The plain note: the same columns as ``SyncedNote``, not synchronized.
final class PlainNote: ActiveObject {
    override class var primaryKey: String { "uuid" }
    @Column var uuid = UUID()
    @Column var title = ""
    @Column var body = ""
    @Column var rank = 0
    @Column var score = 0.0
}

/// The synchronized note: every insert, update and delete of its table is logged by triggers.
final class SyncedNote: ActiveObject {
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = UUID()
    @Column var title = ""
    @Column var body = ""
    @Column var rank = 0
    @Column var score = 0.0
}

/// The columns the two note models share, so that one generic body inserts either.
protocol NoteColumns: ActiveObject {
    var uuid: UUID { get set }
    var title: String { get set }
    var body: String { get set }
    var rank: Int { get set }
    var score: Double { get set }
}

extension PlainNote: NoteColumns {}
extension SyncedNote: NoteColumns {}

/// One note's values, generated before anything is timed (the same for every variant).
struct NoteSeed: Sendable {
    var uuid: UUID
    var title: String
    var body: String
    var rank: Int
    var score: Double

    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)

    private static func text(_ range: ClosedRange<Int>, using rng: inout SplitMix64) -> String {
        let count = range.lowerBound + Int(rng.next() % UInt64(range.count))
        return String(decoding: (0..<count).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }, as: UTF8.self)
    }

    /// A title of 10–30 characters, a body of 40–80, a rank below 1,000, a score with cents.
    static func make(using rng: inout SplitMix64) -> NoteSeed {
        let high = rng.next(), low = rng.next()
        let bytes = withUnsafeBytes(of: (high, low)) { Array($0) }
        let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6] & 0x0F | 0x40, bytes[7],
                               bytes[8] & 0x3F | 0x80, bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        return NoteSeed(uuid: uuid, title: text(10...30, using: &rng), body: text(40...80, using: &rng),
                        rank: Int(rng.next() % 1_000), score: Double(rng.next() % 100_000) / 100)
    }

    static func make(count: Int, seed: UInt64) -> [NoteSeed] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in make(using: &rng) }
    }

    func note<Note: NoteColumns>(_ type: Note.Type) -> Note {
        let note = Note()
        note.uuid = uuid
        note.title = title
        note.body = body
        note.rank = rank
        note.score = score
        return note
    }
}

/// Saves a note per seed, one by one, in one transaction (the `insert` workload's way).
/// Returns the checksum of what was saved.
func saveNotes<Note: NoteColumns>(_ type: Note.Type, _ seeds: [NoteSeed], in database: Database) throws -> Int {
    var checksum = 0
    try database.transaction {
        for seed in seeds {
            let note = seed.note(Note.self)
            try note.save()
            checksum &+= note.rank &+ 1
        }
    }
    return checksum
}

/// The same notes with `insertAll` (the `insert-all` workload's way).
func insertAllNotes<Note: NoteColumns>(_ type: Note.Type, _ seeds: [NoteSeed]) throws -> Int {
    let notes = seeds.map { $0.note(Note.self) }
    try Note.insertAll(notes)
    return notes.reduce(0) { $0 &+ $1.rank &+ 1 }
}

/// What the sync workloads measured.
struct SyncResults {
    /// sync-capture: medians per variant (`plain`, `synchronized`, `plain-insertAll`, …).
    var capture = Report()
    /// sync-capture: the process's CPU time of the same runs (ms), which load on the machine
    /// disturbs less than wall time.
    var captureCPU = Report()
    var captureRows = 0
    /// sync-capture: log entries the synchronized table's triggers wrote in the last round
    /// (one per row expected).
    var captureLogEntries = 0
    /// sync-hub: per transport (`HTTP`, `in-process`), one sample per timed round.
    var hub: [String: [HubSample]] = [:]
    var hubTransports: [String] = []
    var hubRows = 0
    /// sync-idle: the phases measured, in order.
    var idle: [IdleSample] = []
}

struct HubSample {
    /// A's synchronize() (push), B's (pull), and from the start of the first to the end of the second, ms.
    var push: Double
    var pull: Double
    var total: Double
    var exchanges: Int
    var requestBytes: Int
    var replyBytes: Int
    /// Of the push and of the pull, the time inside the transport's exchanges (in-process: the
    /// hub's `handle`; HTTP: the hub, the server and URLSession), ms; the rest is the engine's own work.
    var pushExchange: Double
    var pullExchange: Double
}

struct IdleSample {
    var phase: String
    var seconds: Double
    var userMicroseconds: Int64
    var systemMicroseconds: Int64
    var voluntarySwitches: Int
    var involuntarySwitches: Int
    var cpuMilliseconds: Double { Double(userMicroseconds + systemMicroseconds) / 1000 }
}

@MainActor
func runSyncSection(sizes: Sizes, directory: URL) async throws -> SyncResults {
    var results = SyncResults()
    guard syncWorkloads.contains(where: sizes.wants) else { return results }
    try runSyncCapture(sizes: sizes, directory: directory, into: &results)
    try await runSyncHub(sizes: sizes, directory: directory, into: &results)
    try await runSyncIdle(sizes: sizes, directory: directory, into: &results)
    return results
}

// MARK: sync-capture

@MainActor
func runSyncCapture(sizes: Sizes, directory: URL, into results: inout SyncResults) throws {
    guard sizes.wants("sync-capture") else { return }
    let rows = sizes.insertCount
    log("sync-capture: \(rows) notes saved one by one in one transaction (and with insertAll), synchronized table vs plain, \(sizes.warmups) warm-up + \(sizes.rounds) rounds")
    let seeds = NoteSeed.make(count: rows, seed: 0x5_1C_CA)
    let plain = try Database(path: directory.appendingPathComponent("sync-capture-plain.sqlite").path)
    let synced = try Database(path: directory.appendingPathComponent("sync-capture-synchronized.sqlite").path)
    defer {
        ActiveObject.defaultDatabase = nil
        try? plain.close()
        try? synced.close()
    }
    try PlainNote.createTable(in: plain)
    try SyncedNote.createTable(in: synced)   // installs the capture triggers
    let triggers: Int? = try synced.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'synced_note'")
    guard triggers == 3 else { throw BenchError("sync-capture: the synchronized table has \(triggers ?? 0) triggers, expected 3") }

    struct Variant {
        let name: String
        let database: Database
        let synchronized: Bool
        let body: () throws -> Int
    }
    let variants = [
        Variant(name: "plain", database: plain, synchronized: false) { try saveNotes(PlainNote.self, seeds, in: plain) },
        Variant(name: "synchronized", database: synced, synchronized: true) { try saveNotes(SyncedNote.self, seeds, in: synced) },
        Variant(name: "plain-insertAll", database: plain, synchronized: false) { try insertAllNotes(PlainNote.self, seeds) },
        Variant(name: "synchronized-insertAll", database: synced, synchronized: true) { try insertAllNotes(SyncedNote.self, seeds) },
    ]
    var report = Report(), cpuReport = Report()
    // Each pair (save, insertAll) alternates plain and synchronized, the first rotating.
    for pair in [Array(variants[0..<2]), Array(variants[2..<4])] {
        for variant in pair {
            report.register("sync-capture", variant.name)
            cpuReport.register("sync-capture", variant.name)
        }
        var expected: Int?
        for round in 0..<(sizes.warmups + sizes.rounds) {
            for k in pair.indices {
                let variant = pair[(k + round) % pair.count]
                // Untimed: an empty table (and change log), the WAL checkpointed.
                try variant.database.execute("DELETE FROM \(variant.synchronized ? "synced_note" : "plain_note")")
                if variant.synchronized { try variant.database.execute("DELETE FROM activeobjects_sync_log") }
                try variant.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                ActiveObject.defaultDatabase = variant.database
                let cpuStart = processCPUNanoseconds()
                let (milliseconds, checksum) = try measure(variant.body)
                let cpu = Double(processCPUNanoseconds() - cpuStart) / 1e6
                if let expected, expected != checksum {
                    throw BenchError("sync-capture: \(variant.name) computed checksum \(checksum), expected \(expected)")
                }
                expected = checksum
                if round >= sizes.warmups {
                    report.record("sync-capture", variant.name, milliseconds)
                    cpuReport.record("sync-capture", variant.name, cpu)
                }
            }
        }
    }
    let logged: Int? = try synced.scalar("SELECT count(*) FROM activeobjects_sync_log WHERE kind = 0")
    results.captureLogEntries = logged ?? 0
    guard results.captureLogEntries == rows else {
        throw BenchError("sync-capture: the change log holds \(results.captureLogEntries) inserts, expected \(rows)")
    }
    results.capture = report
    results.captureCPU = cpuReport
    results.captureRows = rows
    log("  sync-capture: done")
}

// MARK: sync-hub

/// A transport that hands requests straight to a hub (no HTTP).
struct InProcessTransport: SyncTransport {
    let hub: SyncHub
    let user: String
    func exchange(_ request: Data) async throws -> Data {
        try await hub.handle(request: request, user: user)
    }
}

/// Counts the exchanges and bytes of another transport.
struct CountingTransport: SyncTransport {
    struct Counts {
        var exchanges = 0, requestBytes = 0, replyBytes = 0
        /// Time spent inside the inner transport's exchange (the hub's work, and HTTP's), ns.
        var exchangeNanoseconds: UInt64 = 0
    }
    let inner: any SyncTransport
    let counts: LockedBox<Counts>

    func exchange(_ request: Data) async throws -> Data {
        let start = monotonicNanoseconds()
        let reply = try await inner.exchange(request)
        let elapsed = monotonicNanoseconds() - start
        counts.withLock {
            $0.exchanges += 1
            $0.requestBytes += request.count
            $0.replyBytes += reply.count
            $0.exchangeNanoseconds += elapsed
        }
        return reply
    }
}

/// A hub database and two devices, A holding `seeds` as notes saved (and captured), B empty,
/// in a folder of their own; engines over `transport(hub)`.
@MainActor
final class SyncPair {
    let folder: URL
    let hubDatabase: Database
    let hub: SyncHub
    let a: Database
    let b: Database
    /// Each device's exchanges.
    let countsA = LockedBox(CountingTransport.Counts())
    let countsB = LockedBox(CountingTransport.Counts())
    private(set) var engineA: SyncEngine!
    private(set) var engineB: SyncEngine!

    init(folder: URL, seeds: [NoteSeed]) throws {
        self.folder = folder
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        hubDatabase = try Database(path: folder.appendingPathComponent("hub.sqlite").path)
        hub = try SyncHub(database: hubDatabase, models: [SyncedNote.self])
        a = try Database(path: folder.appendingPathComponent("a.sqlite").path)
        b = try Database(path: folder.appendingPathComponent("b.sqlite").path)
        try SyncedNote.createTable(in: a)
        try SyncedNote.createTable(in: b)
        ActiveObject.defaultDatabase = a
        defer { ActiveObject.defaultDatabase = nil }
        _ = try saveNotes(SyncedNote.self, seeds, in: a)
    }

    /// Creates both engines, each over `transport`, counted.
    func makeEngines(_ transport: any SyncTransport) throws {
        engineA = try SyncEngine(database: a, models: [SyncedNote.self],
                                 transport: CountingTransport(inner: transport, counts: countsA))
        engineB = try SyncEngine(database: b, models: [SyncedNote.self],
                                 transport: CountingTransport(inner: transport, counts: countsB))
    }

    func close() {
        engineA = nil
        engineB = nil
        try? a.close()
        try? b.close()
        try? hubDatabase.close()
        try? FileManager.default.removeItem(at: folder)
    }
}


@MainActor
func runSyncHub(sizes: Sizes, directory: URL, into results: inout SyncResults) async throws {
    guard sizes.wants("sync-hub") else { return }
    let rows = sizes.syncHubRows
    log("sync-hub: \(rows) notes made on device A reach device B through a SyncHub (A pushes, then B pulls), over HTTP on 127.0.0.1 and in-process, \(sizes.warmups) warm-up + \(sizes.syncHubRounds) rounds")
    let seeds = NoteSeed.make(count: rows, seed: 0x5_1C_4B)
    let server = try await SyncHTTPServer.start()
    defer { Task { await server.stop() } }
    let transports = ["HTTP", "in-process"]
    results.hubTransports = transports
    results.hubRows = rows
    for round in 0..<(sizes.warmups + sizes.syncHubRounds) {
        for k in transports.indices {
            let name = transports[(k + round) % transports.count]
            let pair = try SyncPair(folder: directory.appendingPathComponent("sync-hub-\(round)-\(k)"), seeds: seeds)
            defer { pair.close() }
            if name == "HTTP" {
                server.hub.withLock { $0 = pair.hub }
                try pair.makeEngines(HTTPSyncTransport(url: server.url, token: SyncHTTPServer.token))
            } else {
                try pair.makeEngines(InProcessTransport(hub: pair.hub, user: SyncHTTPServer.user))
            }
            let start = monotonicNanoseconds()
            let pushed = try await pair.engineA.synchronize()
            let middle = monotonicNanoseconds()
            let pulled = try await pair.engineB.synchronize()
            let end = monotonicNanoseconds()
            server.hub.withLock { $0 = nil }
            // Untimed: everything arrived.
            guard pushed.pushed == rows, pulled.pulled == rows else {
                throw BenchError("sync-hub \(name): pushed \(pushed.pushed), pulled \(pulled.pulled), expected \(rows) each")
            }
            let onB: Int? = try await pair.b.scalar("SELECT count(*) FROM synced_note")
            let pending = try pair.engineA.pendingChangeCount()
            guard onB == rows, pending == 0 else {
                throw BenchError("sync-hub \(name): B holds \(onB ?? 0) notes, A has \(pending) changes pending")
            }
            if round == 0 {
                let sampleA: [Row] = try await pair.a.rows("SELECT * FROM synced_note ORDER BY uuid LIMIT 50")
                let sampleB: [Row] = try await pair.b.rows("SELECT * FROM synced_note ORDER BY uuid LIMIT 50")
                guard sampleA.map({ "\($0.values)" }) == sampleB.map({ "\($0.values)" }) else {
                    throw BenchError("sync-hub \(name): B's notes differ from A's")
                }
            }
            guard round >= sizes.warmups else { continue }
            let countsA = pair.countsA.current, countsB = pair.countsB.current
            results.hub[name, default: []].append(HubSample(
                push: Double(middle - start) / 1e6, pull: Double(end - middle) / 1e6, total: Double(end - start) / 1e6,
                exchanges: countsA.exchanges + countsB.exchanges, requestBytes: countsA.requestBytes + countsB.requestBytes,
                replyBytes: countsA.replyBytes + countsB.replyBytes,
                pushExchange: Double(countsA.exchangeNanoseconds) / 1e6, pullExchange: Double(countsB.exchangeNanoseconds) / 1e6))
        }
    }
    await server.stop()
    log("  sync-hub: done")
}

// MARK: sync-idle

/// The process's CPU time (user, system, µs) and context switches so far, every thread.
func processUsage() -> (user: Int64, system: Int64, voluntary: Int, involuntary: Int) {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return (Int64(usage.ru_utime.tv_sec) * 1_000_000 + Int64(usage.ru_utime.tv_usec),
            Int64(usage.ru_stime.tv_sec) * 1_000_000 + Int64(usage.ru_stime.tv_usec),
            Int(usage.ru_nvcsw), Int(usage.ru_nivcsw))
}

/// Sits idle for `seconds` (the main actor asleep) and returns what the process used meanwhile.
@MainActor
func idleSample(_ phase: String, seconds: Double) async throws -> IdleSample {
    let before = processUsage()
    try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
    let after = processUsage()
    return IdleSample(phase: phase, seconds: seconds, userMicroseconds: after.user - before.user,
                      systemMicroseconds: after.system - before.system,
                      voluntarySwitches: after.voluntary - before.voluntary,
                      involuntarySwitches: after.involuntary - before.involuntary)
}

@MainActor
func runSyncIdle(sizes: Sizes, directory: URL, into results: inout SyncResults) async throws {
    guard sizes.wants("sync-idle") else { return }
    let seconds = sizes.syncIdleSeconds
    let rows = sizes.syncIdleRows
    log("sync-idle: the process's CPU time over \(format(seconds, decimals: 1)) s idle: no engine; an engine that synchronized \(rows) notes (in-process hub); the HTTP server alone; an engine synchronized through it")
    let seeds = NoteSeed.make(count: rows, seed: 0x5_1D_1E)

    // Settle: what earlier work left running ends first.
    try await Task.sleep(for: .milliseconds(200))
    results.idle.append(try await idleSample("no-engine", seconds: seconds))

    do {
        let pair = try SyncPair(folder: directory.appendingPathComponent("sync-idle-direct"), seeds: seeds)
        defer { pair.close() }
        try pair.makeEngines(InProcessTransport(hub: pair.hub, user: SyncHTTPServer.user))
        _ = try await pair.engineA.synchronize()
        _ = try await pair.engineB.synchronize()
        results.idle.append(try await idleSample("engines-in-process", seconds: seconds))
        guard try await pair.b.scalar("SELECT count(*) FROM synced_note") == rows else {
            throw BenchError("sync-idle: device B did not receive the notes")
        }
    }

    let server = try await SyncHTTPServer.start()
    results.idle.append(try await idleSample("http-server-no-engine", seconds: seconds))
    do {
        let pair = try SyncPair(folder: directory.appendingPathComponent("sync-idle-http"), seeds: seeds)
        defer { pair.close() }
        server.hub.withLock { $0 = pair.hub }
        try pair.makeEngines(HTTPSyncTransport(url: server.url, token: SyncHTTPServer.token))
        _ = try await pair.engineA.synchronize()
        _ = try await pair.engineB.synchronize()
        results.idle.append(try await idleSample("engines-http", seconds: seconds))
        server.hub.withLock { $0 = nil }
        guard try await pair.b.scalar("SELECT count(*) FROM synced_note") == rows else {
            throw BenchError("sync-idle: device B did not receive the notes over HTTP")
        }
    }
    await server.stop()
    log("  sync-idle: done")
}

// MARK: Report

let syncCaptureTargetRatio = 1.3
let syncHubTargetMilliseconds = 2_000.0
/// sync-idle: an idle engine's CPU time, above the same phase without it, at most this (ms per idle period).
let syncIdleToleranceMilliseconds = 2.0

func printSyncLines(_ results: SyncResults) {
    results.capture.printBenchLines()
    for variant in results.capture.contenders {
        if let cpu = results.captureCPU.median("sync-capture", variant) {
            print("CPU sync-capture \(variant) \(format(cpu, decimals: 3))")
        }
    }
    for name in results.hubTransports {
        guard let samples = results.hub[name], !samples.isEmpty else { continue }
        let last = samples[samples.count - 1]
        func median(_ values: (HubSample) -> Double) -> String { format(medianOf(samples.map(values)), decimals: 1) }
        print("SYNC sync-hub \(name) rows=\(results.hubRows) push_ms=\(median(\.push)) push_in_exchanges_ms=\(median(\.pushExchange)) pull_ms=\(median(\.pull)) pull_in_exchanges_ms=\(median(\.pullExchange)) total_ms=\(median(\.total)) total_min_ms=\(format(samples.map(\.total).min()!, decimals: 1)) total_max_ms=\(format(samples.map(\.total).max()!, decimals: 1)) exchanges=\(last.exchanges) request_bytes=\(last.requestBytes) reply_bytes=\(last.replyBytes) n=\(samples.count)")
    }
    for sample in results.idle {
        print("IDLE sync-idle \(sample.phase) seconds=\(format(sample.seconds, decimals: 1)) cpu_ms=\(format(sample.cpuMilliseconds, decimals: 2)) user_ms=\(format(Double(sample.userMicroseconds) / 1000, decimals: 2)) sys_ms=\(format(Double(sample.systemMicroseconds) / 1000, decimals: 2)) voluntary_switches=\(sample.voluntarySwitches) involuntary_switches=\(sample.involuntarySwitches)")
    }
}

func printSyncTables(_ results: SyncResults, sizes: Sizes) {
    func ms(_ value: Double) -> String { format(value, decimals: 1) }
    let capture = results.capture
    if !capture.workloads.isEmpty {
        print("")
        print("Change capture (issue 23): \(results.captureRows) notes (UUID key, 2 TEXT, INTEGER, REAL) into a synchronized table (3 triggers; each insert appends one entry to the change log) vs a plain one, one WAL file each, default options; medians of \(sizes.rounds) rounds, alternating; the verdict on wall time, the process's CPU time beside it (load on the machine disturbs it less):")
        print("")
        print("| inserted with | plain ms | synchronized ms | ratio | µs per row added | CPU plain ms | CPU synchronized ms | CPU ratio | target | verdict |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for (label, suffix) in [("save() one by one, one transaction", ""), ("insertAll", "-insertAll")] {
            guard let plain = capture.median("sync-capture", "plain" + suffix),
                  let synced = capture.median("sync-capture", "synchronized" + suffix) else { continue }
            let ratio = synced / plain
            let perRow = (synced - plain) * 1000 / Double(max(1, results.captureRows))
            let target = suffix.isEmpty ? "≤ \(format(syncCaptureTargetRatio, decimals: 1))×" : "(≤ \(format(syncCaptureTargetRatio, decimals: 1))×)"
            let verdict = ratio <= syncCaptureTargetRatio ? "yes" : "NO"
            let cpuPlain = results.captureCPU.median("sync-capture", "plain" + suffix) ?? .nan
            let cpuSynced = results.captureCPU.median("sync-capture", "synchronized" + suffix) ?? .nan
            print("| \(label) | \(ms(plain)) | \(ms(synced)) | \(format(ratio, decimals: 2))× | \(format(perRow, decimals: 2)) | \(ms(cpuPlain)) | \(ms(cpuSynced)) | \(format(cpuSynced / cpuPlain, decimals: 2))× | \(target) | \(suffix.isEmpty ? verdict : "(\(verdict))") |")
        }
    }
    if !results.hub.isEmpty {
        print("")
        print("Through the hub (issue 23): \(results.hubRows) notes inserted on device A reach device B — A's synchronize() pushes them, then B's pulls them (engine batches of 500); from the start of A's call to the end of B's; medians of \(sizes.syncHubRounds) rounds, a new hub and devices each round (WAL files, default options). HTTP: a Hummingbird server on 127.0.0.1 in the same process, `POST /sync` → `hub.handle`, `HTTPSyncTransport` (URLSession); in-process: `hub.handle` called directly. In exchanges: the part of A's push and of B's pull spent inside the transport's calls (in-process: the hub's work; HTTP: the hub's, the server's and URLSession's), the rest being the device's own work (folding the log, reading the rows and encoding them; decoding the replies, applying the pulled rows):")
        print("")
        print("| transport | A push ms | in exchanges | B pull ms | in exchanges | total ms | min | max | exchanges | bytes up | bytes down | target | verdict |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for name in results.hubTransports {
            guard let samples = results.hub[name], !samples.isEmpty else { continue }
            let total = medianOf(samples.map(\.total))
            let last = samples[samples.count - 1]
            let target = name == "HTTP" ? "≤ \(Int(syncHubTargetMilliseconds / 1000)) s" : "–"
            let verdict = name == "HTTP" ? (total <= syncHubTargetMilliseconds ? "yes" : "NO") : "–"
            func median(_ values: (HubSample) -> Double) -> String { ms(medianOf(samples.map(values))) }
            print("| \(name) | \(median(\.push)) | \(median(\.pushExchange)) | \(median(\.pull)) | \(median(\.pullExchange)) | \(ms(total)) | \(ms(samples.map(\.total).min()!)) | \(ms(samples.map(\.total).max()!)) | \(last.exchanges) | \(last.requestBytes) | \(last.replyBytes) | \(target) | \(verdict) |")
        }
    }
    if !results.idle.isEmpty {
        print("")
        print("An idle engine (issue 23): the process's CPU time (getrusage, every thread, user + system) while it sits idle, each phase after the previous one; an engine adds at most \(format(syncIdleToleranceMilliseconds, decimals: 0)) ms over the same phase without it:")
        print("")
        print("| phase | seconds | CPU ms | user ms | system ms | voluntary switches | involuntary | engine adds | target |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        let byPhase = Dictionary(results.idle.map { ($0.phase, $0) }, uniquingKeysWith: { first, _ in first })
        let baselines = ["engines-in-process": "no-engine", "engines-http": "http-server-no-engine"]
        for sample in results.idle {
            var added = "–", verdict = "–"
            if let baseline = baselines[sample.phase].flatMap({ byPhase[$0] }) {
                let delta = sample.cpuMilliseconds - baseline.cpuMilliseconds
                added = "\(format(delta, decimals: 2)) ms"
                verdict = delta <= syncIdleToleranceMilliseconds ? "≈ 0: yes" : "≈ 0: NO"
            }
            print("| \(sample.phase) | \(format(sample.seconds, decimals: 1)) | \(format(sample.cpuMilliseconds, decimals: 2)) | \(format(Double(sample.userMicroseconds) / 1000, decimals: 2)) | \(format(Double(sample.systemMicroseconds) / 1000, decimals: 2)) | \(sample.voluntarySwitches) | \(sample.involuntarySwitches) | \(added) | \(verdict) |")
        }
    }
}
