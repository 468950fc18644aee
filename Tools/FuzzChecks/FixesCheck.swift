import Foundation
import GeofenceCore

/// What gpsd tells the agent, as gpsd's own JSON records one a line (TPV, GST, SKY, DEVICE), through the
/// epoch coalescer and the location assembler as the gpsd pipeline routes them. Any number may also be
/// "nan" or "inf", as libgps hands over fields it could not read; `rx` (seconds) is when the agent read the
/// record, else a tenth of a second per line. Every location that comes out must be one the monitors can
/// trust the form of: on the globe, finite, in range, and forward in time per receiver.
enum FixesCheck {
    static func problems(_ input: [UInt8]) -> [String] {
        var coalescer = EpochCoalescer()
        var assembler = LocationAssembler()
        var locations: [Location] = []
        func assemble(_ reports: [ReceiverReport]) {
            for report in reports {
                if case .location(let l)? = assembler.assemble(
                    report, wallClock: Date(timeIntervalSince1970: 1_700_000_000))
                {
                    locations.append(l)
                }
            }
        }
        var lineNumber = 0
        for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(2_000) {
            lineNumber += 1
            guard let record = try? JSONParser.parse(Array(line)), case .object = record else { continue }
            let received = GPSDRecord.received(record, line: lineNumber)
            switch record["class"] {
            case .string("TPV")?:
                assemble(coalescer.add(GPSDRecord.report(record, received: received)))
            case .string("GST")?:
                let noise = GPSDRecord.noise(record)
                assembler.note(noise: noise)
                assemble(coalescer.add(noise: noise, receivedAtNanoseconds: received))
            case .string("SKY")?:
                if let used = GPSDRecord.satellitesUsed(record) {
                    assembler.note(satellitesUsed: used, device: record.text("device"))
                }
            case .string("DEVICE")?:
                if let path = record.text("path"), GPSDRecord.number(record, "activated") == 0 {
                    assemble(coalescer.close(device: path).map { [$0] } ?? [])
                    assembler.removed(device: path)
                }
            default:
                assemble(coalescer.closeQuiet(now: received))
            }
        }
        assemble(coalescer.closeAll())
        return Array(problems(locations).prefix(5))
    }

    static func problems(_ locations: [Location]) -> [String] {
        var problems: [String] = []
        var last: [String: Date] = [:]
        for l in locations {
            func check(_ ok: Bool, _ what: String) { if !ok { problems.append("\(what) in \(l)") } }
            check(l.coordinate.isValid, "a coordinate off the globe")
            check(
                l.horizontalAccuracy == -1 || (l.horizontalAccuracy.isFinite && l.horizontalAccuracy > 0),
                "horizontal accuracy \(l.horizontalAccuracy)")
            check(
                l.verticalAccuracy == -1 || (l.verticalAccuracy.isFinite && l.verticalAccuracy > 0),
                "vertical accuracy \(l.verticalAccuracy)")
            check(l.speed == -1 || (l.speed.isFinite && l.speed >= 0), "speed \(l.speed)")
            check(
                l.speedAccuracy == -1 || (l.speedAccuracy.isFinite && l.speedAccuracy > 0),
                "speed accuracy \(l.speedAccuracy)")
            check(l.course == -1 || (l.course.isFinite && l.course >= 0 && l.course < 360), "course \(l.course)")
            check(
                l.courseAccuracy == -1 || (l.courseAccuracy.isFinite && l.courseAccuracy > 0),
                "course accuracy \(l.courseAccuracy)")
            for (name, value) in [("altitudeHAE", l.altitudeHAE), ("altitudeMSL", l.altitudeMSL), ("climb", l.climb)] {
                if let value { check(value.isFinite, "\(name) \(value)") }
            }
            let device = l.device ?? ""
            if let previous = last[device] {
                check(l.timestamp >= previous, "a timestamp before the receiver's last (\(previous))")
            }
            last[device] = l.timestamp
        }
        return problems
    }
}

/// gpsd's JSON records read as libgps hands them over.
enum GPSDRecord {
    static func number(_ record: JSONValue, _ key: String) -> Double? {
        switch record[key] {
        case .number(let n)?: n
        case .string("nan")?: .nan
        case .string("inf")?: .infinity
        case .string("-inf")?: -.infinity
        default: nil
        }
    }

    static func received(_ record: JSONValue, line: Int) -> UInt64 {
        let seconds =
            number(record, "rx").flatMap { $0.isFinite && $0 >= 0 && $0 < 1e9 ? $0 : nil } ?? Double(line) / 10
        return UInt64(seconds * 1e9)
    }

    static func report(_ r: JSONValue, received: UInt64) -> ReceiverReport {
        let mode = number(r, "mode").flatMap { $0.isFinite && abs($0) < 100 ? Int($0) : nil } ?? 0
        let status = number(r, "status").flatMap { $0.isFinite && abs($0) < 100 ? Int($0) : nil } ?? 0
        return ReceiverReport(
            mode: mode, status: status, device: r.text("device"), time: r.text("time").flatMap(RFC3339.date(from:)),
            latitude: number(r, "lat"), longitude: number(r, "lon"),
            altitudeHAE: number(r, "altHAE"), altitudeMSL: number(r, "altMSL") ?? number(r, "alt"),
            epx: number(r, "epx"), epy: number(r, "epy"), eph: number(r, "eph"), epv: number(r, "epv"),
            eps: number(r, "eps"), epd: number(r, "epd"), epc: number(r, "epc"),
            speed: number(r, "speed"), track: number(r, "track"), climb: number(r, "climb"),
            receivedAtNanoseconds: received)
    }

    static func noise(_ r: JSONValue) -> PseudorangeNoise {
        PseudorangeNoise(
            device: r.text("device"), time: r.text("time").flatMap(RFC3339.date(from:)),
            latitudeSigma: number(r, "lat"), longitudeSigma: number(r, "lon"), altitudeSigma: number(r, "alt"))
    }

    static func satellitesUsed(_ r: JSONValue) -> Int? {
        if let n = number(r, "uSat"), n.isFinite, n >= 0, n < 1_000 { return Int(n) }
        guard case .array(let satellites)? = r["satellites"] else { return nil }
        return satellites.filter { $0["used"] == .bool(true) }.count
    }
}

extension JSONValue {
    func text(_ key: String) -> String? {
        if case .string(let s)? = self[key] { return s }
        return nil
    }
}
