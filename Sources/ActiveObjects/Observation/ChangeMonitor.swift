import Foundation

/// Notices commits made to a database file by other connections and processes, for live
/// queries, without using CPU while nothing is written.
///
/// How it wakes up: a commit by anyone writes the file — the `-wal` file in WAL mode, the
/// database file otherwise. The monitor sleeps until the operating system reports such a
/// write (``FileWatcher``: `inotify` on Linux, kqueue vnode events on Apple platforms, both
/// delivered by a Dispatch source on the monitor's serial queue). Our own writes wake it too,
/// so it then asks the writer connection for `PRAGMA data_version`, which changes only when
/// *another* connection committed (<https://www.sqlite.org/pragma.html#pragma_data_version>).
/// The file can be written a moment before the commit becomes visible, so after a wake-up it
/// checks again a few times over the next ~150 ms. Where no file can be watched, it polls
/// `data_version` every 50 ms instead.
///
/// Under a stream of commits (every commit writes the file) the monitor does not wake for
/// each one: after a wake-up it stops listening for a quiet period, then takes everything
/// written meanwhile as one wake-up. The quiet period is ``quietPeriod`` milliseconds, and
/// doubles (up to ``longestQuietPeriod``) while the file is written again as soon as it is
/// watched again — a steady stream of commits — so that the monitor then wakes and takes the
/// writer for a `data_version` look a few dozen times a second, whatever the commit rate (the
/// looks planned right after a wake-up are then left to the end of the quiet period). A
/// commit by another process is still noticed within the quiet period plus the rechecks.
///
/// A look needs the writer connection. When another thread holds it — a thread committing
/// back to back takes it again at once, and would win every attempt of the monitor — the
/// holder looks for the monitor when it gives the writer back (``WriterGate/look(_:)``) and
/// reports a change itself, so that a stream of this process's commits never hides another
/// process's. The monitor also tries again every 5 ms until one of its own looks succeeds.
///
/// Everything runs on one serial Dispatch queue: the scheduling below is the same code on
/// every platform; only the ``FileWatcher`` differs.
final class ChangeMonitor: @unchecked Sendable {
    // Safety of @unchecked Sendable: `stopped` and `activity` are guarded by `lock`; every other
    // mutable property is touched only on `queue`.
    private let lock = NSLock()
    private var stopped = false
    private var activity = 0
    private let queue = DispatchQueue(label: "ActiveObjects.ChangeMonitor")
    private let watcher: FileWatcher
    /// A look at the writer's `data_version`: true when another connection committed since
    /// the last look, nil when it cannot be made right now (the writer is held — its holder
    /// then looks too — or a transaction is open on it): the monitor looks again shortly.
    private let look: @Sendable () -> Bool?
    private let onChange: @Sendable () -> Void
    /// Called once when the monitor stops.
    private let onStop: @Sendable () -> Void

    /// When to look at `data_version` after a wake-up, in milliseconds. (The file is written a
    /// moment before the commit is visible: the look at 1 ms usually finds it, about 2 ms
    /// sooner than the next.)
    static let recheckDelays: [Int] = [0, 1, 3, 15, 50, 150]
    /// The polling period where no file watch is possible.
    static let pollingInterval = 50
    /// After a wake-up, how long file writes are left to pile up (one wake-up for all), in ms.
    static let quietPeriod = 5
    /// The longest quiet period, reached under a steady stream of writes, in ms.
    static let longestQuietPeriod = 40
    /// How long to wait before looking again when a look could not be made, in ms.
    static let retryDelay = 5

    /// The quiet period after a wake-up: doubled when the file was written again within the
    /// previous quiet period's length after watching resumed (writes keep coming), back to
    /// the shortest otherwise.
    static func nextQuietPeriod(previous: Int, sinceWatching: Int64) -> Int {
        sinceWatching < Int64(previous) ? min(previous * 2, longestQuietPeriod) : quietPeriod
    }

    /// The looks planned after a wake-up: all of ``recheckDelays`` after a pause; under a
    /// steady stream of writes (a quiet period longer than the shortest) only those after the
    /// quiet period, whose end brings a look of its own.
    static func recheckDelays(quietLength: Int) -> [Int] {
        quietLength > quietPeriod ? recheckDelays.filter { $0 > quietLength } : recheckDelays
    }

    init(paths: [String], look: @escaping @Sendable () -> Bool?, onChange: @escaping @Sendable () -> Void,
         onStop: @escaping @Sendable () -> Void = {}) {
        self.look = look
        self.onChange = onChange
        self.onStop = onStop
        watcher = FileWatcher(paths: paths)
        queue.async { [self] in start() }
    }

    var isStopped: Bool { lock.withLock { stopped } }

    /// How many times the monitor woke up to do anything (a file event, a planned look, a
    /// retry, a poll): tests check that an idle monitor does nothing at all.
    var activityCount: Int { lock.withLock { activity } }

    /// Stops watching; the monitor's sources are cancelled on its queue soon after.
    func stop() {
        let first: Bool = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        onStop()
        queue.async { [self] in
            watcher.cancel()
            pollTimer?.cancel()
            pollTimer = nil
        }
    }

    // MARK: On the queue

    /// Until when file events only mark a wake-up as pending (see ``quietPeriod``).
    private var quietUntil = DispatchTime.now()
    private var quietLength = ChangeMonitor.quietPeriod
    /// When the watch was last (re)armed.
    private var watchingSince = DispatchTime.now()
    private var quiet = false
    private var wakePending = false
    private var retryPending = false
    private var pollTimer: DispatchSourceTimer?

    private func start() {
        guard !isStopped else { return }
        if !watcher.start(on: queue, onWrite: { [weak self] in self?.fileWritten() }) {
            // No file to watch: poll.
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + .milliseconds(Self.pollingInterval),
                           repeating: .milliseconds(Self.pollingInterval))
            timer.setEventHandler { [weak self] in self?.runCheck(retrying: false) }
            timer.resume()
            pollTimer = timer
        }
        watchingSince = .now()
        // The first look, once the files are watched (a commit after it wakes the watcher):
        // it sets the baseline, and counts as a change (see `DataVersionWatch`); made again
        // shortly when it could not be made now.
        runCheck(retrying: true)
    }

    /// Notes that the monitor did something (tests count it); false once stopped.
    private func active() -> Bool {
        lock.withLock {
            activity += 1
            return !stopped
        }
    }

    /// A watched file was written.
    private func fileWritten() {
        guard active() else { return }
        let now = DispatchTime.now()
        if quiet {
            // Within a quiet period (a watcher that keeps reporting): one wake-up at its end.
            wakePending = true
            return
        }
        let sinceWatching = Int64((now.uptimeNanoseconds &- watchingSince.uptimeNanoseconds) / 1_000_000)
        quietLength = Self.nextQuietPeriod(previous: quietLength, sinceWatching: sinceWatching)
        quietUntil = now + .milliseconds(quietLength)
        quiet = true
        for delay in Self.recheckDelays(quietLength: quietLength) {
            queue.asyncAfter(deadline: now + .milliseconds(delay)) { [weak self] in self?.runCheck(retrying: true) }
        }
        queue.asyncAfter(deadline: quietUntil) { [weak self] in self?.quietEnded() }
    }

    /// The quiet period ended: listen again, and look once — what was written meanwhile went
    /// unseen (or was reported during it: then it is the next wake-up).
    private func quietEnded() {
        guard active() else { return }
        quiet = false
        watcher.rearm()
        watchingSince = .now()
        if wakePending {
            wakePending = false
            fileWritten()
        } else {
            runCheck(retrying: true)
        }
    }

    private func runCheck(retrying: Bool) {
        guard active() else { return }
        switch look() {
        case true?: onChange()
        case false?: break
        case nil:
            // No look now (the writer is busy): look again shortly — once, however many looks failed.
            if retrying && !retryPending {
                retryPending = true
                queue.asyncAfter(deadline: .now() + .milliseconds(Self.retryDelay)) { [weak self] in
                    guard let self else { return }
                    retryPending = false
                    runCheck(retrying: true)
                }
            }
        }
    }
}
