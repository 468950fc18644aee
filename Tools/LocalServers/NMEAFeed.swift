import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A receiver on a TCP port, for gpsd's `tcp://` source: it writes a log's sentences to whoever
/// connects, starting only once a peer is there, so nothing is lost (gpsfake starts on its own clock
/// and a late client misses the start). A peer that reconnects (gpsd restarted) gets the rest of the log.
/// `#` comment lines are skipped, as gpsfake skips them.
public final class NMEAFeed: Sendable {
    public let port: Int
    private let lines: [[UInt8]]
    private let listener: Int32
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    private struct State {
        var next = 0
        var stopping = false
        var paused = false
        /// Pause once this line is next (a test stopping the drive at a known point).
        var pauseAt: Int?
        var connection: Int32 = -1
        var sentAt: [UInt64] = []
    }

    /// Writes the given lines (each may hold several sentences joined by CRLF, written at once).
    public convenience init(sentences: [String], interval: Double = 0) throws {
        try self.init(lines: sentences.map { Array($0.utf8) }, interval: interval, closeAtEnd: false)
    }

    /// - Parameters:
    ///   - interval: seconds between lines (0: as fast as the peer reads).
    ///   - closeAtEnd: close the connection after the last line, as a log that ends.
    ///   - repeats: write the log this many times over, for a longer drive (a benchmark).
    public convenience init(log: URL, interval: Double = 0, closeAtEnd: Bool = false, repeats: Int = 1) throws {
        // Bytes, not Strings: Swift reads "\r\n" as one Character, and several logs end lines that way.
        let bytes = try [UInt8](Data(contentsOf: log))
        try self.init(lines: Self.lines(of: bytes, repeats: repeats), interval: interval, closeAtEnd: closeAtEnd)
    }

    static func lines(of bytes: [UInt8], repeats: Int) -> [[UInt8]] {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
            .map { line in Array(line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]) }
            .filter { $0.first != UInt8(ascii: "#") && !$0.isEmpty }
        return Array(repeatElement(lines, count: max(1, repeats)).joined())
    }

    init(lines: [[UInt8]], interval: Double, closeAtEnd: Bool) throws {
        self.lines = lines
        (listener, port) = try Self.listen()
        let thread = Thread { [self] in serve(interval: interval, closeAtEnd: closeAtEnd) }
        thread.name = "nmea-feed"
        thread.start()
    }

    deinit { stop() }

    /// A listening socket on a loopback port that no other local server of this process was given.
    private static func listen() throws -> (Int32, Int) {
        for _ in 0..<100 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw LocalServerError("socket() failed") }
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            guard let port = LoopbackConnection.bind(fd), Glibc.listen(fd, 4) == 0 else {
                close(fd)
                throw LocalServerError("cannot listen on 127.0.0.1 for the NMEA feed")
            }
            if LocalProcess.claim(port: port) { return (fd, port) }
            close(fd)
        }
        throw LocalServerError("no free loopback port for the NMEA feed after 100 tries")
    }

    /// gpsd's source URL for this feed.
    public var url: String { "tcp://127.0.0.1:\(port)" }

    /// Lines written so far.
    public var linesSent: Int { state.withLock { $0.next } }

    /// When each line was written (CLOCK_MONOTONIC ns), by line index: for latency measurements.
    public var sentTimes: [UInt64] { state.withLock { $0.sentAt } }
    public var lineCount: Int { lines.count }

    public func stop() {
        let fd = state.withLock { s -> Int32 in
            if s.stopping { return -2 }
            s.stopping = true
            return s.connection
        }
        guard fd != -2 else { return }
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        shutdown(listener, Int32(SHUT_RDWR))
        finished.wait()
        close(listener)
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    /// Holds the next line back until `resume()`, as a receiver with nothing new to say: a soak pauses
    /// the drive while it restarts what reads it, so that no crossing passes unseen.
    public func pause() { state.withLock { $0.paused = true } }
    public func resume() { state.withLock { $0.paused = false } }
    /// Pauses once `line` lines have been written, exactly there.
    public func pause(atLine line: Int) { state.withLock { $0.pauseAt = line } }

    private func serve(interval: Double, closeAtEnd: Bool) {
        defer { finished.signal() }
        signal(SIGPIPE, SIG_IGN)
        while !stopping {
            let fd = accept(listener, nil, nil)
            if fd < 0 { if errno == EINTR { continue } else { return } }
            state.withLock { $0.connection = fd }
            var peerGone = false
            while !stopping && !peerGone {
                let (index, paused) = state.withLock { s -> (Int, Bool) in
                    if s.pauseAt == s.next {
                        s.paused = true
                        s.pauseAt = nil
                    }
                    return (s.next, s.paused)
                }
                if paused {
                    usleep(10_000)
                    continue
                }
                guard index < lines.count else { break }
                let bytes = lines[index] + [0x0D, 0x0A]
                if !writeAll(fd, bytes) {
                    peerGone = true
                    break
                }
                var ts = timespec()
                clock_gettime(CLOCK_MONOTONIC, &ts)
                let now = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
                state.withLock {
                    $0.next = index + 1
                    if $0.sentAt.count == index { $0.sentAt.append(now) }
                }
                if interval > 0 { usleep(useconds_t(interval * 1e6)) }
            }
            if !peerGone && !closeAtEnd {
                // Like a receiver that stops talking but stays plugged in: hold until the peer leaves.
                var byte: UInt8 = 0
                while !stopping && recv(fd, &byte, 1, 0) > 0 {}
            }
            state.withLock { $0.connection = -1 }
            close(fd)
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}
