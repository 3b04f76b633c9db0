/// Memory for a statement's TEXT parameters, so that SQLite can use each text where it is
/// (`SQLITE_STATIC`) instead of copying it into a heap block of its own (`SQLITE_TRANSIENT`:
/// a `malloc`, a copy and a `free` per value, a tenth of a whole 10-column INSERT).
///
/// Each ``Statement`` owns one, created on its first text parameter. Texts are copied one
/// after the other into a few blocks; the statement's `reset()` makes the memory available
/// to its next execution. Bindings left from an earlier execution still point into the arena:
/// they are never read (every parameter is bound again before a statement runs), and the one
/// block an arena keeps stays allocated as long as its statement. When an execution needed
/// several blocks, the statement unbinds its parameters (`sqlite3_clear_bindings`) before the
/// arena frees them and keeps one block of at most 64 KiB.
///
/// Not thread-safe: used under the owning connection's lock, like its statement.
final class TextArena {
    /// The longest text copied here; a longer one is bound with SQLite's own copy.
    static let longestText = 4 * 1024
    /// The size of the first block; each later one is twice the last, up to `largestBlock`.
    private static let firstBlock = 512
    private static let largestBlock = 64 * 1024

    // Used under one lock, never reentrantly: no dynamic exclusivity checks.
    @exclusivity(unchecked) private var blocks: [(start: UnsafeMutableRawPointer, size: Int)] = []
    /// The block being filled (-1 before the first copy since the last reset).
    @exclusivity(unchecked) private var current = -1
    /// Bytes used in it.
    @exclusivity(unchecked) private var used = 0

    /// A copy of `bytes` that stays valid as long as the arena; nil when the text is empty or
    /// longer than ``longestText``.
    @inline(__always)
    func copy(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafePointer<CChar>? {
        guard let source = bytes.baseAddress, bytes.count > 0, bytes.count <= Self.longestText else { return nil }
        if current < 0 || used + bytes.count > blocks[current].size { nextBlock(fitting: bytes.count) }
        let target = blocks[current].start + used
        target.copyMemory(from: source, byteCount: bytes.count)
        used += bytes.count
        return UnsafePointer(target.assumingMemoryBound(to: CChar.self))
    }

    /// Moves to the next block that holds `count` bytes, allocating one if needed.
    private func nextBlock(fitting count: Int) {
        current += 1
        used = 0
        while current < blocks.count && blocks[current].size < count { current += 1 }
        if current == blocks.count {
            let size = max(count, min(Self.largestBlock, (blocks.last?.size ?? Self.firstBlock / 2) * 2))
            blocks.append((UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1), size))
        }
    }

    /// True when `reset()` will free blocks: the statement must unbind its texts first.
    var spansSeveralBlocks: Bool { blocks.count > 1 }

    /// Makes the memory available to the next execution (the copies handed out are no longer
    /// read: the statement was reset).
    @inline(__always)
    func reset() {
        if blocks.count > 1 { consolidate() }
        current = -1
        used = 0
    }

    /// Replaces several blocks with one: as large as they were together (the next execution
    /// of the same statement then fits in one block), but never above `largestBlock`, so a
    /// statement keeps at most 64 KiB between executions however many texts it once bound.
    private func consolidate() {
        let total = blocks.reduce(0) { $0 + $1.size }
        for block in blocks { block.start.deallocate() }
        let size = min(total, Self.largestBlock)
        blocks = [(UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1), size)]
    }

    deinit {
        for block in blocks { block.start.deallocate() }
    }
}
