import Foundation
import GeofenceCore

/// One line of gpsd's JSON protocol to a `GPSMessage`, reading only what the agent uses.
///
/// libgps's reader fills its whole `gps_data_t` for every report: each satellite of a SKY, dozens of
/// TPV keys with `strcmp`, numbers with its own `atof`. That was two thirds of the agent's CPU reading
/// gpsd. This one steps over what it does not use. `GPSDTests` hold it to libgps's answers on real
/// captures.
package enum GPSDReportDecoder {
    /// The message on `line` (without its newline); `.other` for a class the agent does not use, and
    /// for a line that is not one JSON object.
    package static func decode(_ line: UnsafeRawBufferPointer, receivedAt: UInt64) -> GPSMessage {
        var fields = ReportFields()
        var cursor = JSONCursor(line)
        guard cursor.object({ c, key in fields.read(key, &c) }), cursor.atEnd() else { return .other }
        return fields.message(receivedAt: receivedAt)
    }

    /// The same, for a line held in a string (tests and tools).
    package static func decode(_ line: String, receivedAt: UInt64 = 0) -> GPSMessage {
        var line = line
        return line.withUTF8 { decode(UnsafeRawBufferPointer($0), receivedAt: receivedAt) }
    }
}

/// What one report said, before its class says what the keys mean (`lat` is a position in TPV and a
/// 1-sigma error in GST).
struct ReportFields {
    var messageClass: UInt64 = 0
    var device: String?
    var time: Date?
    var mode = 0
    var status = 0
    var lat = Double.nan, lon = Double.nan, alt = Double.nan, altHAE = Double.nan, altMSL = Double.nan
    var epx = Double.nan, epy = Double.nan, eph = Double.nan, epv = Double.nan
    var eps = Double.nan, epd = Double.nan, epc = Double.nan
    var speed = Double.nan, track = Double.nan, climb = Double.nan
    var path: String?
    var activated = false
    var satellitesUsed: Int?
    var deviceCount = 0
    var errorMessage: String?

    /// Keys as `JSONKey.code` packs them, written out as literals: a static let of a literal needs no lazy
    /// initialisation on each read. `GPSDReportDecoderTests` checks each against `JSONKey.code`.
    enum Key {
        static let `class`: UInt64 = 0x73_7361_6c63  // "class"
        static let device: UInt64 = 0x6563_6976_6564  // "device"
        static let time: UInt64 = 0x656d_6974  // "time"
        static let mode: UInt64 = 0x6564_6f6d  // "mode"
        static let status: UInt64 = 0x7375_7461_7473  // "status"
        static let lat: UInt64 = 0x74616c  // "lat"
        static let lon: UInt64 = 0x6e6f6c  // "lon"
        static let alt: UInt64 = 0x746c61  // "alt"
        static let altHAE: UInt64 = 0x4541_4874_6c61  // "altHAE"
        static let altMSL: UInt64 = 0x4c53_4d74_6c61  // "altMSL"
        static let epx: UInt64 = 0x787065  // "epx"
        static let epy: UInt64 = 0x797065  // "epy"
        static let eph: UInt64 = 0x687065  // "eph"
        static let epv: UInt64 = 0x767065  // "epv"
        static let eps: UInt64 = 0x737065  // "eps"
        static let epd: UInt64 = 0x647065  // "epd"
        static let epc: UInt64 = 0x637065  // "epc"
        static let speed: UInt64 = 0x64_6565_7073  // "speed"
        static let track: UInt64 = 0x6b_6361_7274  // "track"
        static let climb: UInt64 = 0x62_6d69_6c63  // "climb"
        static let path: UInt64 = 0x6874_6170  // "path"
        static let devices: UInt64 = 0x73_6563_6976_6564  // "devices"
        static let message: UInt64 = 0x65_6761_7373_656d  // "message"
        static let used: UInt64 = 0x6465_7375  // "used"
    }

    enum Class {
        static let tpv: UInt64 = 0x565054  // "TPV"
        static let gst: UInt64 = 0x545347  // "GST"
        static let sky: UInt64 = 0x594b53  // "SKY"
        static let device: UInt64 = 0x4543_4956_4544  // "DEVICE"
        static let devices: UInt64 = 0x53_4543_4956_4544  // "DEVICES"
        static let error: UInt64 = 0x52_4f52_5245  // "ERROR"
        static let version: UInt64 = 0x4e_4f49_5352_4556  // "VERSION"
    }

    /// Reads or skips one member's value.
    mutating func read(_ key: JSONKey, _ c: inout JSONCursor) -> Bool {
        switch key.code {
        case Key.class:
            guard let bytes = c.stringBytes() else { return false }
            messageClass =
                bytes.count <= 8
                ? JSONKey(
                    start: bytes.bindMemory(to: UInt8.self).baseAddress!,
                    count: bytes.count
                ).code : 0
            return true
        case Key.device: return readString(&device, &c)
        case Key.time:
            guard let bytes = c.stringBytes() else { return c.skipValue() }
            time = GPSDTime.parse(bytes)
            return true
        case Key.mode: return readInteger(&mode, &c)
        case Key.status: return readInteger(&status, &c)
        case Key.lat: return readNumber(&lat, &c)
        case Key.lon: return readNumber(&lon, &c)
        case Key.alt: return readNumber(&alt, &c)
        case Key.altHAE: return readNumber(&altHAE, &c)
        case Key.altMSL: return readNumber(&altMSL, &c)
        case Key.epx: return readNumber(&epx, &c)
        case Key.epy: return readNumber(&epy, &c)
        case Key.eph: return readNumber(&eph, &c)
        case Key.epv: return readNumber(&epv, &c)
        case Key.eps: return readNumber(&eps, &c)
        case Key.epd: return readNumber(&epd, &c)
        case Key.epc: return readNumber(&epc, &c)
        case Key.speed: return readNumber(&speed, &c)
        case Key.track: return readNumber(&track, &c)
        case Key.climb: return readNumber(&climb, &c)
        case Key.path: return readString(&path, &c)
        case Key.message: return readString(&errorMessage, &c)
        case Key.devices:
            deviceCount = 0
            return c.array { element in
                deviceCount += 1
                return element.skipValue()
            }
        default:
            if key.is("satellites") { return readSatellites(&c) }
            if key.is("activated") { return readActivated(&c) }
            return c.skipValue()
        }
    }

    func message(receivedAt: UInt64) -> GPSMessage {
        let device = device.flatMap { $0.isEmpty ? nil : $0 }
        switch messageClass {
        case Class.tpv:
            // gpsd always sends a mode; libgps takes a TPV without one for no fix report at all. A mode
            // past 3D is no report gpsd writes (a fuzzer's).
            guard (1...3).contains(mode) else { return .other }
            return .fix(
                ReceiverReport(
                    mode: mode, status: status, device: device, time: time,
                    latitude: finite(lat), longitude: finite(lon), altitudeHAE: finite(altHAE),
                    altitudeMSL: finite(altMSL), epx: finite(epx), epy: finite(epy), eph: finite(eph),
                    epv: finite(epv), eps: finite(eps), epd: finite(epd), epc: finite(epc), speed: finite(speed),
                    track: finite(track), climb: finite(climb), receivedAtNanoseconds: receivedAt))
        case Class.gst:
            return .noise(
                PseudorangeNoise(
                    device: device, time: time, latitudeSigma: finite(lat), longitudeSigma: finite(lon),
                    altitudeSigma: finite(alt)))
        case Class.sky:
            // A SKY without satellites carries only DOPs.
            guard let satellitesUsed else { return .other }
            return .sky(device: device, satellitesUsed: satellitesUsed)
        case Class.device:
            guard let path, !path.isEmpty else { return .other }
            return .device(path: path, active: activated)
        case Class.devices: return .devices(count: deviceCount)
        case Class.error: return .error(errorMessage ?? "")
        case Class.version: return .version
        default: return .other
        }
    }

    /// Counts the satellites marked used.
    private mutating func readSatellites(_ c: inout JSONCursor) -> Bool {
        var used = 0
        let ok = c.array { element in
            element.object { s, key in
                guard key.code == Key.used else { return s.skipValue() }
                guard let flag = s.bool() else { return false }
                if flag { used += 1 }
                return true
            }
        }
        satellitesUsed = used
        return ok
    }

    /// A receiver's activation time when it is active; gpsd sends `"activated":0` when it went away.
    private mutating func readActivated(_ c: inout JSONCursor) -> Bool {
        if let bytes = c.stringBytes() {
            activated = bytes.count > 0
            return true
        }
        guard let value = c.number() else { return c.skipValue() }
        activated = value != 0
        return true
    }

    private func readString(_ field: inout String?, _ c: inout JSONCursor) -> Bool {
        guard let s = c.string() else { return c.skipValue() }
        field = s
        return true
    }

    private func readInteger(_ field: inout Int, _ c: inout JSONCursor) -> Bool {
        guard let v = c.number() else { return c.skipValue() }
        field = v.isFinite && abs(v) < 1e9 ? Int(v) : 0
        return true
    }

    private func readNumber(_ field: inout Double, _ c: inout JSONCursor) -> Bool {
        guard let v = c.number() else { return c.skipValue() }
        field = v
        return true
    }

    private func finite(_ v: Double) -> Double? { v.isFinite ? v : nil }
}
