import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads gpsd's newline-ended reports from a socket in large reads, and hands each whole line on in
/// place. One read usually carries a whole epoch's reports, where libgps made a `select` and a `recv`
/// for every one; and the read waits itself, under a receive timeout, so that a wake-up costs one system
/// call, not a `poll` and a `read`.
final class GPSDLineReader {
    /// gpsd's longest report (a SKY of many satellites) is under 10 KB; a longer line is dropped whole.
    static let capacity = 64 * 1024
    private let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
    /// Bytes of an unfinished line kept at the start of `storage`.
    private var pending = 0
    /// Bytes the last read added after `pending`.
    private var received = 0
    /// True while the rest of an over-long line is being dropped.
    private var discarding = false
    /// Lines dropped because they did not fit.
    private(set) var oversizedLines = 0
    /// The receive timeout set on the socket (whole milliseconds, in microseconds); nil: none yet.
    private var timeoutSet: Int32?

    deinit { storage.deallocate() }

    /// Forgets a partial line and the timeout, for a new connection.
    func reset() {
        pending = 0
        received = 0
        discarding = false
        timeoutSet = nil
    }

    /// Waits up to `microseconds` (rounded up to a millisecond; 0: not at all) for bytes on the stream
    /// socket `fd` and reads what has come. True when bytes came; then `forEachLine` hands them on. Throws
    /// `.connectionClosed` at the end of the stream and `.readFailed` on an error.
    func read(fd: Int32, waitingUpTo microseconds: Int32) throws(GPSError) -> Bool {
        let free = Self.capacity - pending
        let destination = storage.baseAddress! + pending
        let n: Int
        if microseconds <= 0 {
            n = recv(fd, destination, free, Int32(MSG_DONTWAIT))
        } else {
            // Set again only when it changes: it stays at the reader's longest wait while no deadline is near.
            let timeout = (microseconds + 999) / 1000 * 1000
            if timeoutSet != timeout {
                var limit = timeval(tv_sec: Int(timeout / 1_000_000), tv_usec: Int(timeout % 1_000_000))
                guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size)) == 0
                else { throw .readFailed(errno: errno) }
                timeoutSet = timeout
            }
            n = recv(fd, destination, free, 0)
        }
        if n == 0 { throw .connectionClosed }
        if n < 0 {
            if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { return false }
            throw .readFailed(errno: errno)
        }
        received = n
        return true
    }

    /// Calls `body` for each whole line the last read completed, without its newline, and keeps the
    /// unfinished tail for the next read.
    func forEachLine(_ body: (UnsafeRawBufferPointer) -> Void) {
        let count = pending + received
        received = 0
        split(count: count, body)
    }

    /// Hands on the lines of the first `count` bytes and keeps the unfinished tail.
    private func split(count: Int, _ body: (UnsafeRawBufferPointer) -> Void) {
        let base = storage.baseAddress!
        var start = 0
        while let newline = memchr(base + start, 0x0A, count - start) {
            let end = base.distance(to: newline)
            if discarding {
                discarding = false
            } else {
                var lineEnd = end
                if lineEnd > start, storage[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                body(UnsafeRawBufferPointer(start: base + start, count: lineEnd - start))
            }
            start = end + 1
        }
        pending = count - start
        if pending == Self.capacity {
            // A line longer than the buffer: drop it up to its newline.
            oversizedLines += discarding ? 0 : 1
            discarding = true
            pending = 0
        } else if pending > 0, start > 0 {
            memmove(base, base + start, pending)
        }
    }
}
