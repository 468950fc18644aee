import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads gpsd's newline-ended reports from a socket in large reads, and hands each whole line on in
/// place. One read usually carries a whole epoch's reports, where libgps made a `select` and a `recv`
/// for every one.
final class GPSDLineReader {
    /// gpsd's longest report (a SKY of many satellites) is under 10 KB; a longer line is dropped whole.
    static let capacity = 64 * 1024
    private let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
    /// Bytes of an unfinished line kept at the start of `storage`.
    private var pending = 0
    /// True while the rest of an over-long line is being dropped.
    private var discarding = false
    /// Lines dropped because they did not fit.
    private(set) var oversizedLines = 0

    deinit { storage.deallocate() }

    /// Forgets a partial line, for a new connection.
    func reset() {
        pending = 0
        discarding = false
    }

    /// Waits up to `microseconds` for bytes on `fd`. True when a read will not block (data, or the
    /// peer's close, which the read then reports).
    func wait(fd: Int32, microseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let rc = poll(&p, 1, max(0, (microseconds + 999) / 1000))
        return rc > 0
    }

    /// One `read` from `fd`, then `body` for each whole line in the buffer, without its newline.
    /// Throws `.connectionClosed` at the end of the stream and `.readFailed` on an error.
    func read(fd: Int32, _ body: (UnsafeRawBufferPointer) -> Void) throws(GPSError) {
        let free = Self.capacity - pending
        let n = Glibc.read(fd, storage.baseAddress! + pending, free)
        if n == 0 { throw .connectionClosed }
        if n < 0 {
            if errno == EINTR || errno == EAGAIN { return }
            throw .readFailed(errno: errno)
        }
        split(count: pending + n, body)
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
