import CGPS
import Foundation
import GeofenceCore

/// The one owner of a libgps `gps_data_t` (about 24 KB, not thread-safe). Every call blocks, so a
/// connection lives on one dedicated thread (`GPSReader`) and never on Swift's cooperative pool.
final class GPSConnection {
    private let data: UnsafeMutablePointer<gps_data_t>
    private var isOpen = false
    private var buffer = [CChar](repeating: 0, count: 4096)

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
    }

    /// WATCH as JSON, for one device path or all. WATCH is per connection: send it after every open.
    func watch(device: String?) throws(GPSError) {
        var flags = UInt32(WATCH_ENABLE | WATCH_JSON)
        if device != nil { flags |= UInt32(WATCH_DEVICE) }
        let rc: Int32 = device.map { gfa_stream(data, flags, $0) } ?? gfa_stream(data, flags, nil)
        guard rc == 0 else { throw .watchFailed(errno: errno) }
    }

    /// True when a message can be read now, or when gpsd has closed the socket (the read then fails).
    func waiting(microseconds: Int32) -> Bool {
        isOpen && gps_waiting(data, microseconds)
    }

    /// Reads and decodes one message.
    func read(receivedAt: UInt64) throws(GPSError) -> GPSMessage {
        errno = 0
        let rc = buffer.withUnsafeMutableBufferPointer { gfa_read(data, $0.baseAddress, Int32($0.count)) }
        if rc < 0 {
            // gpsd closing the socket reads as -1 with errno 0.
            throw errno == 0 ? .connectionClosed : .readFailed(errno: errno)
        }
        if rc == 0 { throw .connectionClosed }
        var r = gfa_report()
        gfa_extract(data, &r)
        gfa_clear_set(data)
        let message = Self.decode(r, receivedAt: receivedAt)
        if message == .other, let removed = buffer.withUnsafeBufferPointer({ Self.removedDevice(in: $0) }) {
            return .device(path: removed, active: false)
        }
        return message
    }

    func close() {
        guard isOpen else { return }
        gps_close(data)
        isOpen = false
    }

    private static func decode(_ r: gfa_report, receivedAt: UInt64) -> GPSMessage {
        let device = r.device.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        if r.set & gfa_mask_tpv() != 0 {
            return .fix(
                ReceiverReport(
                    mode: Int(r.mode), status: Int(r.status), device: device,
                    time: r.has_time != 0 ? Self.date(r.time_sec, r.time_nsec) : nil,
                    latitude: finite(r.latitude), longitude: finite(r.longitude),
                    altitudeHAE: finite(r.alt_hae), altitudeMSL: finite(r.alt_msl),
                    epx: finite(r.epx), epy: finite(r.epy), eph: finite(r.eph), epv: finite(r.epv),
                    eps: finite(r.eps), epd: finite(r.epd), epc: finite(r.epc),
                    speed: finite(r.speed), track: finite(r.track), climb: finite(r.climb),
                    receivedAtNanoseconds: receivedAt))
        }
        if r.set & gfa_mask_gst() != 0 {
            return .noise(
                PseudorangeNoise(
                    device: device, time: r.gst_has_time != 0 ? Self.date(r.gst_time_sec, r.gst_time_nsec) : nil,
                    latitudeSigma: finite(r.gst_lat), longitudeSigma: finite(r.gst_lon),
                    altitudeSigma: finite(r.gst_alt)))
        }
        if r.set & gfa_mask_device() != 0, let device {
            return .device(path: device, active: r.device_activated == 1)
        }
        if r.set & gfa_mask_devicelist() != 0 { return .devices(count: Int(r.device_count)) }
        if r.set & gfa_mask_error() != 0 { return .error(r.error.map { String(cString: $0) } ?? "") }
        if r.set & gfa_mask_satellite() != 0, r.satellites_used >= 0 {
            return .sky(device: device, satellitesUsed: Int(r.satellites_used))
        }
        if r.set & gfa_mask_version() != 0 { return .version }
        return .other
    }

    /// libgps 3.22 fails to parse gpsd's `{"class":"DEVICE","path":...,"activated":0}` (it expects a
    /// time string) and sets nothing, so a removed receiver is read from the raw line.
    static func removedDevice(in raw: UnsafeBufferPointer<CChar>) -> String? {
        guard let base = raw.baseAddress else { return nil }
        let line = String(cString: base)
        guard line.hasPrefix("{\"class\":\"DEVICE\""), line.contains("\"activated\":0"),
            let start = line.range(of: "\"path\":\"")
        else { return nil }
        let rest = line[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }

    private static func finite(_ v: Double) -> Double? { v.isFinite ? v : nil }

    private static func date(_ seconds: Int64, _ nanoseconds: Int) -> Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }
}
