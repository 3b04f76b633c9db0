import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reports writes to a few files through a Dispatch source on the caller's queue: the only
/// platform-specific part of the ``ChangeMonitor``.
///
/// - Linux: one `inotify` descriptor with a one-shot watch per file (`IN_ONESHOT`: the watch
///   ends with its first event, so that while the monitor is quiet, writes cost the writer
///   nothing), read by a `DispatchSource` read source; ``rearm()`` sets the watches again.
/// - Apple platforms: a vnode `DispatchSource` per file (kqueue `EVFILT_VNODE`), which keeps
///   reporting; ``rearm()`` has nothing to do.
///
/// Every method runs on the queue given to ``start(on:onWrite:)``. A source's descriptor is
/// closed by its cancel handler, which Dispatch runs after the last event handler: no event
/// handler, and no ``rearm()``, ever sees a descriptor closed under it.
final class FileWatcher {
    private let paths: [String]

    init(paths: [String]) { self.paths = paths }

    #if canImport(Darwin)
    private var sources: [DispatchSourceFileSystemObject] = []

    /// Starts watching; false when no file could be watched (the caller polls instead).
    func start(on queue: DispatchQueue, onWrite: @escaping @Sendable () -> Void) -> Bool {
        for path in paths {
            let descriptor = open(path, O_EVTONLY)
            guard descriptor >= 0 else { continue }
            let source = DispatchSource.makeFileSystemObjectSource(
                fileDescriptor: descriptor, eventMask: [.write, .extend, .attrib], queue: queue)
            source.setEventHandler(handler: onWrite)
            source.setCancelHandler { close(descriptor) }
            source.resume()
            sources.append(source)
        }
        return !sources.isEmpty
    }

    /// Listens again after a quiet period (vnode sources never stopped).
    func rearm() {}

    /// Stops watching for good.
    func cancel() {
        sources.forEach { $0.cancel() }
        sources.removeAll()
    }
    #else
    private var source: DispatchSourceRead?
    private var descriptor: Int32 = -1

    /// Starts watching; false when no file could be watched (the caller polls instead).
    func start(on queue: DispatchQueue, onWrite: @escaping @Sendable () -> Void) -> Bool {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return false }
        self.descriptor = descriptor
        guard addWatches() else {
            close(descriptor)
            self.descriptor = -1
            return false
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler {
            // Drain the events (their content does not matter: a watched file was written).
            var buffer = [UInt8](repeating: 0, count: 4096)
            while read(descriptor, &buffer, buffer.count) > 0 {}
            onWrite()
        }
        source.setCancelHandler { close(descriptor) }
        source.resume()
        self.source = source
        return true
    }

    /// Sets the one-shot watches again (their first event ended them).
    func rearm() {
        guard source != nil else { return }
        _ = addWatches()
    }

    /// Stops watching for good; the descriptor is closed once the source is cancelled.
    func cancel() {
        source?.cancel()
        source = nil
    }

    /// Watches every path for one write; false when no path could be watched.
    private func addWatches() -> Bool {
        var watched = false
        for path in paths
        where inotify_add_watch(descriptor, path, UInt32(IN_MODIFY | IN_CLOSE_WRITE) | UInt32(IN_ONESHOT)) >= 0 {
            watched = true
        }
        return watched
    }
    #endif
}
