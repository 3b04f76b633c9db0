import Foundation

/// The change monitor's view of the writer's `PRAGMA data_version`, which changes only when
/// another connection or process commits: the value seen at the last look, compared with the
/// next. Looks are made by the monitor's queue and by threads giving the writer back, while
/// holding the writer; two looks may be recorded in the other order than they were made (the
/// monitor records after giving the writer back), which only costs one needless fetch.
final class DataVersionWatch: @unchecked Sendable {
    // Safety of @unchecked Sendable: `last` is guarded by `lock`; `onChange` is immutable.
    private let lock = NSLock()
    private var last: Int64?
    /// Called when another connection committed (a look found a new version).
    let onChange: @Sendable () -> Void

    init(onChange: @escaping @Sendable () -> Void) { self.onChange = onChange }

    /// Records the version a look found: true when it differs from the previous look's.
    ///
    /// The first look is a change too: it may come after another connection's commit that
    /// the observations' first fetches did not see (the monitor's thread starts late on a
    /// busy machine, or the writer is held and its holder looks only when it gives it back),
    /// and a baseline taken after that commit would hide it for good. Reporting it costs one
    /// fetch per observation when the monitor starts, which emits only if the result changed.
    func record(_ version: Int64) -> Bool {
        lock.withLock {
            defer { last = version }
            return last.map { $0 != version } ?? true
        }
    }
}
