import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Notices commits made to a database file by other connections and processes, for live
/// queries, without using CPU while nothing is written.
///
/// How it wakes up: a commit by anyone writes the file — the `-wal` file in WAL mode, the
/// database file otherwise. The monitor sleeps until the operating system reports such a
/// write (Linux: `inotify`; Apple platforms: a `DispatchSource` watching the files, i.e.
/// kqueue `EVFILT_VNODE`). Our own writes wake it too, so it then asks the writer connection
/// for `PRAGMA data_version`, which changes only when *another* connection committed
/// (<https://www.sqlite.org/pragma.html#pragma_data_version>). The file can be written a
/// moment before the commit becomes visible, so after a wake-up it checks again a few times
/// over the next ~150 ms. Where no file watch can be set up, it polls `data_version` every
/// 50 ms instead.
///
/// Under a stream of commits (every commit writes the file) the monitor does not wake for
/// each one: after a wake-up it ignores the file for a quiet period, then takes everything
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
/// process's. The monitor also keeps trying every 5 ms until one of its own looks succeeds.
/// On Linux the watches are one-shot (`IN_ONESHOT`) and set again when the quiet period ends,
/// followed by one look: while they are off, writes cost the writer nothing for the monitor.
final class ChangeMonitor: @unchecked Sendable {
    // Safety of @unchecked Sendable: `stopped` and `runningThreadID` are guarded by `lock`; the rest is immutable, or
    // touched only by the monitor's own thread (Linux) or serial queue (Apple).
    private let lock = NSLock()
    private var stopped = false
    private let paths: [String]
    /// A look at the writer's `data_version`: true when another connection committed since
    /// the last look, nil when it cannot be made right now (the writer is held — its holder
    /// then looks too — or a transaction is open on it): the monitor looks again shortly.
    private let look: @Sendable () -> Bool?
    private let onChange: @Sendable () -> Void
    /// Called once when the monitor stops.
    private let onStop: @Sendable () -> Void
    /// When to look at `data_version` after a wake-up, in milliseconds.
    static let recheckDelays: [Int] = [0, 3, 15, 50, 150]
    /// The polling period where no file watch is possible.
    static let pollingInterval = 50
    /// After a wake-up, how long file writes are left to pile up (one wake-up for all), in ms.
    static let quietPeriod = 5
    /// The longest quiet period, reached under a steady stream of writes, in ms.
    static let longestQuietPeriod = 40

    /// The quiet period after a wake-up: doubled when the file was written again within the
    /// previous quiet period's length after watching resumed (writes keep coming), back to
    /// the shortest otherwise.
    static func nextQuietPeriod(previous: Int, sinceWatching: Int64) -> Int {
        sinceWatching < Int64(previous) ? min(previous * 2, longestQuietPeriod) : quietPeriod
    }

    /// The looks planned after a wake-up: all of ``recheckDelays`` after a pause; under a
    /// steady stream of writes (a quiet period longer than the shortest) only those after the
    /// quiet period, whose end brings a look of its own (Linux) or the next wake-up.
    static func recheckDelays(quietLength: Int) -> [Int] {
        quietLength > quietPeriod ? recheckDelays.filter { $0 > quietLength } : recheckDelays
    }

    init(paths: [String], look: @escaping @Sendable () -> Bool?, onChange: @escaping @Sendable () -> Void,
         onStop: @escaping @Sendable () -> Void = {}) {
        self.paths = paths
        self.look = look
        self.onChange = onChange
        self.onStop = onStop
        start()
    }

    var isStopped: Bool { lock.withLock { stopped } }

    /// The Linux thread id of the monitor's thread once it runs (tests measure its CPU time).
    var threadID: String? { lock.withLock { runningThreadID } }
    private var runningThreadID: String?

    /// Stops watching; the monitor's thread (or sources) end soon after.
    func stop() {
        let first: Bool = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        if first { onStop() }
        wake()
    }

    #if canImport(Darwin)
    private let queue = DispatchQueue(label: "ActiveObjects.ChangeMonitor")
    private var sources: [DispatchSourceFileSystemObject] = []
    private var timer: DispatchSourceTimer?
    private var pendingChecks = 0

    private func start() {
        queue.async { [self] in
            for path in paths {
                let descriptor = open(path, O_EVTONLY)
                guard descriptor >= 0 else { continue }
                let source = DispatchSource.makeFileSystemObjectSource(
                    fileDescriptor: descriptor, eventMask: [.write, .extend, .attrib], queue: queue)
                source.setEventHandler { [weak self] in self?.fileWritten() }
                source.setCancelHandler { close(descriptor) }
                source.resume()
                sources.append(source)
            }
            if sources.isEmpty {
                // No file to watch: poll.
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now(), repeating: .milliseconds(Self.pollingInterval))
                timer.setEventHandler { [weak self] in self?.runCheck(retrying: false) }
                timer.resume()
                self.timer = timer
            }
            // The first look, once the files are watched (a commit after it wakes the
            // sources): it sets the baseline, and counts as a change (see `DataVersionWatch`);
            // made again shortly when it could not be made now.
            runCheck(retrying: true)
        }
    }

    /// Until when file events only mark a wake-up as pending (see ``quietPeriod``).
    private var quietUntil = DispatchTime.now()
    private var quietLength = ChangeMonitor.quietPeriod
    private var wakePending = false
    private var retryPending = false

    private func fileWritten() {
        let now = DispatchTime.now()
        if now < quietUntil {
            if !wakePending {
                wakePending = true
                queue.asyncAfter(deadline: quietUntil) { [weak self] in
                    guard let self else { return }
                    wakePending = false
                    fileWritten()
                }
            }
            return
        }
        let sinceQuiet = Int64((now.uptimeNanoseconds &- quietUntil.uptimeNanoseconds) / 1_000_000)
        quietLength = Self.nextQuietPeriod(previous: quietLength, sinceWatching: wakePending ? 0 : sinceQuiet)
        quietUntil = now + .milliseconds(quietLength)
        for delay in Self.recheckDelays(quietLength: quietLength) {
            queue.asyncAfter(deadline: now + .milliseconds(delay)) { [weak self] in self?.runCheck(retrying: true) }
        }
    }

    private func runCheck(retrying: Bool) {
        guard !isStopped else { return }
        switch look() {
        case true?: onChange()
        case false?: break
        case nil:
            // No look now (the writer is busy): look again shortly — once, however many looks failed.
            if retrying && !retryPending {
                retryPending = true
                queue.asyncAfter(deadline: .now() + .milliseconds(5)) { [weak self] in
                    guard let self else { return }
                    retryPending = false
                    runCheck(retrying: true)
                }
            }
        }
    }

    private func wake() {
        queue.async { [self] in
            sources.forEach { $0.cancel() }
            sources.removeAll()
            timer?.cancel()
            timer = nil
        }
    }
    #else
    /// inotify descriptor (or -1 when unavailable: polling), and a pipe that wakes the thread.
    private var inotify: Int32 = -1
    private var pipeEnds: [Int32] = [-1, -1]

    private func start() {
        inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if inotify >= 0 && !addWatches() {
            close(inotify)
            inotify = -1
        }
        _ = pipeEnds.withUnsafeMutableBufferPointer { pipe($0.baseAddress!) }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        WorkerLane.startThread(named: "AO monitor") { [self] in run() }
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(pipeEnds[1], &byte, 1)
    }

    private static func now() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }

    /// Watches every path for one write (the watch ends with its first event); false when no
    /// path could be watched.
    private func addWatches() -> Bool {
        var watched = false
        for path in paths where inotify_add_watch(inotify, path, UInt32(IN_MODIFY | IN_CLOSE_WRITE) | UInt32(IN_ONESHOT)) >= 0 {
            watched = true
        }
        return watched
    }

    private func run() {
        let id = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?
            .split(separator: "/").last.map(String.init)
        lock.withLock { runningThreadID = id }
        defer {
            if inotify >= 0 { close(inotify) }
            close(pipeEnds[0])
            close(pipeEnds[1])
        }
        // Due times of looks, in ms. The first look, due now, sets the baseline and counts as
        // a change (see `DataVersionWatch`); like every look, it is retried when it cannot be
        // made at once.
        var checks: [Int64] = [Self.now()]
        // While quiet (a wake-up less than a quiet period ago), the one-shot watches are off.
        var quiet = false
        var quietUntil: Int64 = 0
        var quietLength = Self.quietPeriod
        var watchingSince = Int64.min / 2
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !isStopped {
            let now = Self.now()
            var timeout: Int32 = -1
            if inotify < 0 {
                timeout = Int32(Self.pollingInterval)
            } else {
                var next = checks.min()
                if quiet { next = min(next ?? quietUntil, quietUntil) }
                if let next { timeout = Int32(clamping: max(0, next - now)) }
            }
            var descriptors = [pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)]
            if inotify >= 0 { descriptors.append(pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if isStopped { break }
            if ready > 0 && descriptors[0].revents != 0 { break }
            if inotify < 0 {
                if look() == true { onChange() }
                continue
            }
            if ready > 0 && descriptors[1].revents != 0 {
                // A watched file was written (its watch is now off): one wake-up, then quiet.
                while read(inotify, &buffer, buffer.count) > 0 {}
                if !quiet {
                    let base = Self.now()
                    quiet = true
                    quietLength = Self.nextQuietPeriod(previous: quietLength, sinceWatching: base - watchingSince)
                    quietUntil = base + Int64(quietLength)
                    checks = Self.recheckDelays(quietLength: quietLength).map { base + Int64($0) }
                }
            }
            if quiet && Self.now() >= quietUntil {
                // Watch again, and look once: what was written meanwhile went unseen.
                quiet = false
                _ = addWatches()
                watchingSince = Self.now()
                checks.append(watchingSince)
            }
            let due = Self.now()
            guard checks.contains(where: { $0 <= due }) else { continue }
            checks.removeAll { $0 <= due }
            switch look() {
            case true?: onChange()
            case false?: break
            case nil:
                // No look now (the writer is busy): look again shortly — once, however many looks failed.
                if !checks.contains(where: { $0 <= due + 5 }) { checks.append(due + 5) }
            }
        }
    }
    #endif
}
