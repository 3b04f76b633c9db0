/// of an observed fetch).
final class ReadRecorder {
    private(set) var tables = Set<String>()
    private var last: StatementInfo?

    func record(_ info: StatementInfo) {
        guard info !== last else { return }
        last = info
        tables.formUnion(info.readTables)
    }
}
