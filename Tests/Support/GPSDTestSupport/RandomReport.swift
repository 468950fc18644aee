import Foundation
import GPSD
import GeofenceCore

/// Random gpsd reports, written as gpsd 3.22 writes them (class first, fixed decimals), with the other
/// keys shuffled and keys the agent does not read among them; each with the message it must read as.
package enum RandomReport {
    package static func make(_ r: inout SplitMix64) -> (String, GPSMessage) {
        switch Int.random(in: 0..<10, using: &r) {
        case 0..<5: return tpv(&r)
        case 5, 6: return sky(&r)
        case 7: return gst(&r)
        case 8: return device(&r)
        default: return devices(&r)
        }
    }

    /// A number in one of the forms JSON allows.
    package static func number(_ r: inout SplitMix64) -> String {
        let v = Double.random(in: -1e4...1e4, using: &r) * pow(10, Double(Int.random(in: -6...4, using: &r)))
        switch Int.random(in: 0..<6, using: &r) {
        case 0: return String(format: "%.9f", v)
        case 1: return String(format: "%.3f", v)
        case 2: return String(format: "%.17g", v)
        case 3: return String(format: "%.6e", v)
        case 4: return "\(Int(v))"
        default: return "\(v)"
        }
    }

    private static func tpv(_ r: inout SplitMix64) -> (String, GPSMessage) {
        var members: [String] = []
        var report = ReceiverReport(mode: Int.random(in: 1...3, using: &r))
        members.append("\"mode\":\(report.mode)")
        if Bool.random(using: &r) {
            report.status = Int.random(in: 0...8, using: &r)
            members.append("\"status\":\(report.status)")
        }
        if Bool.random(using: &r) {
            report.device = "/dev/ttyUSB\(Int.random(in: 0...9, using: &r))"
            members.append("\"device\":\"\(report.device!)\"")
        }
        if Bool.random(using: &r) {
            let (text, date) = time(&r)
            report.time = date
            members.append("\"time\":\"\(text)\"")
        }
        let fields: [(String, WritableKeyPath<ReceiverReport, Double?>, String, ClosedRange<Double>)] = [
            ("lat", \.latitude, "%.9f", -90...90), ("lon", \.longitude, "%.9f", -180...180),
            ("altHAE", \.altitudeHAE, "%.4f", -400...9000), ("altMSL", \.altitudeMSL, "%.4f", -400...9000),
            ("epx", \.epx, "%.3f", 0...500), ("epy", \.epy, "%.3f", 0...500), ("eph", \.eph, "%.3f", 0...500),
            ("epv", \.epv, "%.3f", 0...500), ("eps", \.eps, "%.2f", 0...50), ("epd", \.epd, "%.4f", 0...360),
            ("epc", \.epc, "%.2f", 0...50), ("speed", \.speed, "%.3f", 0...90), ("track", \.track, "%.4f", 0...360),
            ("climb", \.climb, "%.3f", -20...20),
        ]
        for (key, path, format, range) in fields where Bool.random(using: &r) {
            let text = String(format: format, Double.random(in: range, using: &r))
            report[keyPath: path] = Double(text)
            members.append("\"\(key)\":\(text)")
        }
        members += unknown(&r, ["ept", "magvar", "geoidSep", "sep", "ecefx", "alt"])
        return (line("TPV", members, &r), .fix(report))
    }

    private static func sky(_ r: inout SplitMix64) -> (String, GPSMessage) {
        let count = Int.random(in: 0...24, using: &r)
        var used = 0
        let satellites = (0..<count).map { i -> String in
            let isUsed = Bool.random(using: &r)
            if isUsed { used += 1 }
            return "{\"PRN\":\(i + 1),\"el\":\(Int.random(in: 0...90, using: &r)).0,\"az\":"
                + "\(Int.random(in: 0...359, using: &r)).0,\"ss\":\(Int.random(in: 0...50, using: &r)).0,"
                + "\"used\":\(isUsed),\"gnssid\":0,\"svid\":\(i + 1)}"
        }
        var members = [
            "\"nSat\":\(count)", "\"uSat\":\(used)", "\"satellites\":[\(satellites.joined(separator: ","))]",
        ]
        members += unknown(&r, ["hdop", "xdop", "vdop", "pdop"])
        return (line("SKY", members, &r), .sky(device: nil, satellitesUsed: used))
    }

    private static func gst(_ r: inout SplitMix64) -> (String, GPSMessage) {
        var noise = PseudorangeNoise(latitudeSigma: nil, longitudeSigma: nil)
        var members: [String] = []
        let (text, date) = time(&r)
        noise.time = date
        members.append("\"time\":\"\(text)\"")
        let fields: [(String, WritableKeyPath<PseudorangeNoise, Double?>)] = [
            ("lat", \.latitudeSigma), ("lon", \.longitudeSigma), ("alt", \.altitudeSigma),
        ]
        for (key, path) in fields where Bool.random(using: &r) {
            let text = String(format: "%.3f", Double.random(in: 0...100, using: &r))
            noise[keyPath: path] = Double(text)
            members.append("\"\(key)\":\(text)")
        }
        members += unknown(&r, ["rms", "major", "minor", "orient"])
        return (line("GST", members, &r), .noise(noise))
    }

    private static func device(_ r: inout SplitMix64) -> (String, GPSMessage) {
        let path = "/dev/pts/\(Int.random(in: 0...99, using: &r))"
        let active = Bool.random(using: &r)
        var members = ["\"path\":\"\(path)\"", "\"driver\":\"NMEA0183\""]
        members.append(active ? "\"activated\":\"\(time(&r).0)\"" : "\"activated\":0")
        // libgps 3.22 reads a removal only from the raw line with the path and activation in this order.
        return ("{\"class\":\"DEVICE\"," + members.joined(separator: ",") + "}", .device(path: path, active: active))
    }

    private static func devices(_ r: inout SplitMix64) -> (String, GPSMessage) {
        let count = Int.random(in: 0...4, using: &r)
        let list = (0..<count).map { i in
            "{\"class\":\"DEVICE\",\"path\":\"/dev/pts/\(i)\",\"driver\":\"NMEA0183\",\"activated\":\"\(time(&r).0)\"}"
        }
        return (line("DEVICES", ["\"devices\":[\(list.joined(separator: ","))]"], &r), .devices(count: count))
    }

    /// A time to the millisecond, as gpsd writes it, and the date it names.
    private static func time(_ r: inout SplitMix64) -> (String, Date) {
        let milliseconds = Int.random(in: 946_684_800_000...4_102_444_799_999, using: &r)
        let seconds = Double(milliseconds / 1000)
        // Foundation's style truncates to the millisecond: format a time a little past it.
        let text = Date(timeIntervalSince1970: seconds + Double(milliseconds % 1000) / 1e3 + 0.0002)
            .formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
        return (text, Date(timeIntervalSince1970: seconds + Double(milliseconds % 1000 * 1_000_000) / 1e9))
    }

    /// Keys libgps knows and the agent skips, with numbers (libgps refuses another type for them), and a
    /// key neither knows, with any simple value.
    private static func unknown(_ r: inout SplitMix64, _ keys: [String]) -> [String] {
        var members = keys.filter { _ in Bool.random(using: &r) }.map { "\"\($0)\":\(number(&r))" }
        switch Int.random(in: 0..<4, using: &r) {
        case 0: members.append("\"x_note\":\(number(&r))")
        case 1: members.append("\"x_note\":\"a \\\"quoted\\\" note\"")
        case 2: members.append("\"x_note\":\(Bool.random(using: &r))")
        default: break
        }
        return members
    }

    private static func line(_ cls: String, _ members: [String], _ r: inout SplitMix64) -> String {
        "{\"class\":\"\(cls)\"," + members.shuffled(using: &r).joined(separator: ",") + "}"
    }
}
