import CGPS
import Foundation
import GeofenceCore

/// The one owner of a libgps `gps_data_t` (about 24 KB, not thread-safe). libgps opens the socket and
/// sends WATCH; the reports are read from its socket by `GPSDLineReader` and decoded by
/// `GPSDReportDecoder`, which reads only what the agent uses. Every call blocks, so a connection lives on
/// one dedicated thread (`gpsd-reader`) and never on Swift's cooperative pool.
final class GPSConnection {
    private let data: UnsafeMutablePointer<gps_data_t>
    private var isOpen = false
    private let lines = GPSDLineReader()

    init() {
        data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        memset(data, 0, MemoryLayout<gps_data_t>.size)
    }

    deinit {
        close()
        data.deallocate()
    }

    func open(host: String, port: String) throws(GPSError) {
        close()
        let rc = gps_open(host, port, data)
        guard rc == 0 else {
            // libgps returns -1 and leaves the reason, a negative code, in errno.
            let code = errno > 0 ? -errno : Int32(errno)
            let reason = code < 0 ? String(cString: gps_errstr(code)) : String(cString: strerror(errno))
            throw .cannotConnect(host: host, port: port, code: code, message: reason)
        }
        isOpen = true
        lines.reset()
        // The reader waits in its reads (under a receive timeout), so the socket must block.
        let fd = gfa_fd(data)
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0, flags & O_NONBLOCK != 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    }

    /// WATCH as JSON, for one device path or all. WATCH is per connection: send it after every open.
    func watch(device: String?) throws(GPSError) {
        var flags = UInt32(WATCH_ENABLE | WATCH_JSON)
        if device != nil { flags |= UInt32(WATCH_DEVICE) }
        let rc: Int32 = device.map { gfa_stream(data, flags, $0) } ?? gfa_stream(data, flags, nil)
        guard rc == 0 else { throw .watchFailed(errno: errno) }
    }

    /// Waits up to `microseconds` for what gpsd sends, reads it, and hands on each report, decoded
    /// (`GPSDReportDecoder`), with the time the read returned: the reports of one read share it. Returns
    /// without calling `body` when nothing came in time.
    func read(waitingUpTo microseconds: Int32, _ body: (GPSMessage, _ receivedAt: UInt64) -> Void)
        throws(GPSError)
    {
        guard isOpen else { throw .connectionClosed }
        guard try lines.read(fd: gfa_fd(data), waitingUpTo: microseconds) else { return }
        let receivedAt = MonotonicClock.now()
        lines.forEachLine { line in
            body(GPSDReportDecoder.decode(line, receivedAt: receivedAt), receivedAt)
        }
    }

    /// The socket to gpsd, to wait for (-1 when closed).
    var descriptor: Int32 { isOpen ? gfa_fd(data) : -1 }

    func close() {
        guard isOpen else { return }
        gps_close(data)
        isOpen = false
    }
}
