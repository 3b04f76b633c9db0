import Foundation

// The concurrency and live-query part of a run: its own database file per contender (the
// `item` table with the read workloads' rows, and the small `other<i>` tables), then the
// workloads in order: read-threads, read-latency, read-latency-async, live-latency,
// live-changes, live-commit-cost, live-external, live-changes-external, live-overhead (the
// live workloads change rows, so they come last).

let concurrencyWorkloads = ["read-threads", "read-latency", "read-latency-async"]
let liveWorkloads = ["live-latency", "live-external", "live-overhead", "live-changes", "live-commit-cost",
                     "live-changes-external"]

@MainActor
func runConcurrencySection(sizes: Sizes, directory: URL) async throws -> (ConcurrencyResults, LiveResults) {
    var concurrency = ConcurrencyResults()
    var live = LiveResults()
    guard (concurrencyWorkloads + liveWorkloads).contains(where: sizes.wants) else { return (concurrency, live) }

    let names = concurrentContenderNames.filter { sizes.onlyContenders?.contains($0) ?? true }
    var paths: [String: String] = [:]
    log("concurrency: populating \(sizes.tableRows) rows per database")
    for name in names {
        let path = directory.appendingPathComponent("concurrency-\(name).sqlite").path
        try createDatabase(at: path)
        try populateDatabase(at: path, count: sizes.tableRows, seed: 0x5EED)
        let connection = try RawConnection(path: path)
        for index in 0..<otherTableCount {
            for sql in createOtherTablesSQL(index) { try connection.execute(sql) }
        }
        connection.close()
        paths[name] = path
    }
    let contenders = try names.map { try makeConcurrentContender($0, path: paths[$0]!) }
    defer { for contender in contenders { try? contender.close() } }
    concurrency.contenders = contenders.map(\.name)

    var rng = SplitMix64(seed: 0x200_000)
    let seeds = sizes.wants("read-latency") || sizes.wants("read-latency-async")
        ? (0..<sizes.latencyRows).map { _ in ItemSeed.make(using: &rng) } : []

    try runReadThroughput(contenders, sizes: sizes, into: &concurrency)
    try runReadLatency(contenders, seeds: seeds, sizes: sizes, into: &concurrency)
    try await runReadLatencyAsync(contenders, seeds: seeds, sizes: sizes, into: &concurrency)

    let liveContenders = contenders.compactMap { $0 as? LiveContender }
    live.contenders = liveContenders.map(\.name)
    try await runLiveLatency(liveContenders, sizes: sizes, into: &live)
    try await runLiveChanges(liveContenders, sizes: sizes, into: &live)
    try await runLiveCommitCost(liveContenders, sizes: sizes, into: &live)
    if let activeObjects = contenders.first(where: { $0 is ActiveObjectsConcurrentContender }) as? ActiveObjectsConcurrentContender {
        try await runLiveExternal(activeObjects, path: paths["ActiveObjects"]!, sizes: sizes, into: &live)
        try await runLiveChangesExternal(activeObjects, path: paths["ActiveObjects"]!, sizes: sizes, into: &live)
    }
    try await runLiveOverhead(liveContenders, sizes: sizes, into: &live)
    return (concurrency, live)
}
