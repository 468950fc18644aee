import CGPS
import Foundation
import GPSD
import GeofenceCore

/// libgps's own reading of a gpsd report (`gps_unpack`), turned into a `GPSMessage` the way the agent
/// read reports before it had its own decoder. The decoder is held to it.
package enum LibgpsOracle {
    /// Each line is read into a fresh `gps_data_t`, so one report cannot lend another its fields.
    package static func decode(_ line: String) -> GPSMessage {
        let data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        defer { data.deallocate() }
        memset(data, 0, MemoryLayout<gps_data_t>.size)
        var bytes = Array(line.utf8CString)
        let rc = bytes.withUnsafeMutableBufferPointer { gps_unpack($0.baseAddress, data) }
        var r = gfa_report()
        gfa_extract(data, &r)
        let message = rc < 0 ? GPSMessage.other : message(r)
        // libgps 3.22 cannot read `"activated":0` (it wants a time): the agent read such a removal from the
        // raw line, and so does the oracle.
        if message == .other, line.hasPrefix("{\"class\":\"DEVICE\""), line.contains("\"activated\":0"),
            let path = path(in: line)
        {
            return .device(path: path, active: false)
        }
        return message
    }

    private static func message(_ r: gfa_report) -> GPSMessage {
        let device = r.device.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        if r.set & gfa_mask_tpv() != 0 {
            return .fix(
                ReceiverReport(
                    mode: Int(r.mode), status: Int(r.status), device: device,
                    time: r.has_time != 0 ? date(r.time_sec, r.time_nsec) : nil,
                    latitude: finite(r.latitude), longitude: finite(r.longitude),
                    altitudeHAE: finite(r.alt_hae), altitudeMSL: finite(r.alt_msl),
                    epx: finite(r.epx), epy: finite(r.epy), eph: finite(r.eph), epv: finite(r.epv),
                    eps: finite(r.eps), epd: finite(r.epd), epc: finite(r.epc),
                    speed: finite(r.speed), track: finite(r.track), climb: finite(r.climb)))
        }
        if r.set & gfa_mask_gst() != 0 {
            return .noise(
                PseudorangeNoise(
                    device: device, time: r.gst_has_time != 0 ? date(r.gst_time_sec, r.gst_time_nsec) : nil,
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

    private static func path(in line: String) -> String? {
        guard let start = line.range(of: "\"path\":\"") else { return nil }
        let rest = line[start.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    private static func finite(_ v: Double) -> Double? { v.isFinite ? v : nil }

    private static func date(_ seconds: Int64, _ nanoseconds: Int) -> Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }
}

/// Two messages alike up to the last bits of a number: libgps converts with its own `atof`, and its
/// times go through a double of seconds.
package func nearlyEqual(_ a: GPSMessage, _ b: GPSMessage) -> Bool {
    switch (a, b) {
    case (.fix(var x), .fix(var y)):
        guard close(x.time, y.time) else { return false }
        x.time = nil
        y.time = nil
        let xs = [
            x.latitude, x.longitude, x.altitudeHAE, x.altitudeMSL, x.epx, x.epy, x.eph, x.epv, x.eps, x.epd,
            x.epc, x.speed, x.track, x.climb,
        ]
        let ys = [
            y.latitude, y.longitude, y.altitudeHAE, y.altitudeMSL, y.epx, y.epy, y.eph, y.epv, y.eps, y.epd,
            y.epc, y.speed, y.track, y.climb,
        ]
        return x.mode == y.mode && x.status == y.status && x.device == y.device
            && zip(xs, ys).allSatisfy { close($0, $1) }
    case (.noise(let x), .noise(let y)):
        return x.device == y.device && close(x.time, y.time) && close(x.latitudeSigma, y.latitudeSigma)
            && close(x.longitudeSigma, y.longitudeSigma) && close(x.altitudeSigma, y.altitudeSigma)
    default:
        return a == b
    }
}

private func close(_ a: Double?, _ b: Double?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (let x?, let y?): return x == y || abs(x - y) <= 1e-12 * max(abs(x), abs(y))
    default: return false
    }
}

private func close(_ a: Date?, _ b: Date?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (let x?, let y?): return abs(x.timeIntervalSince(y)) < 1e-6
    default: return false
    }
}

/// A report's kind, by name, for the tests that count what a capture holds.
package func kind(_ m: GPSMessage) -> String {
    switch m {
    case .fix: "fix"
    case .noise: "noise"
    case .sky: "sky"
    case .device: "device"
    case .devices: "devices"
    case .version: "version"
    case .error: "error"
    case .other: "other"
    }
}
