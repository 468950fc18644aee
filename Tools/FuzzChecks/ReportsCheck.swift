import Foundation
import GPSD
import GeofenceCore

/// gpsd's reports, one a line, through the agent's own decoder (`GPSDReportDecoder`), which reads them
/// with unsafe pointers: whatever the bytes, it ends without reading outside the line (AddressSanitizer
/// sees each line as a buffer of its own), gives the same message twice, and a message carries only
/// what a report can: finite numbers, a fix mode of 1 to 3, a time in years 1 to 9999, counts ≥ 0.
enum ReportsCheck {
    static func problems(_ input: [UInt8]) -> [String] {
        var problems: [String] = []
        for line in input.split(separator: UInt8(ascii: "\n")).prefix(2_000) {
            let bytes = Array(line)
            let first = bytes.withUnsafeBytes { GPSDReportDecoder.decode($0, receivedAt: 1) }
            let second = bytes.withUnsafeBytes { GPSDReportDecoder.decode($0, receivedAt: 1) }
            if first != second { problems.append("two readings differ: \(first) and \(second)") }
            problems += self.problems(first)
        }
        return Array(problems.prefix(5))
    }

    private static func problems(_ message: GPSMessage) -> [String] {
        var problems: [String] = []
        func check(_ ok: Bool, _ what: String) { if !ok { problems.append("\(what) in \(message)") } }
        switch message {
        case .fix(let r):
            check((1...3).contains(r.mode), "a fix of mode \(r.mode)")
            let numbers = [
                r.latitude, r.longitude, r.altitudeHAE, r.altitudeMSL, r.epx, r.epy, r.eph, r.epv,
                r.eps, r.epd, r.epc, r.speed, r.track, r.climb,
            ].compactMap { $0 }
            check(numbers.allSatisfy(\.isFinite), "a number that is not finite")
            check(r.time.map(inYears) ?? true, "a time outside years 1 to 9999")
        case .noise(let n):
            let numbers = [n.latitudeSigma, n.longitudeSigma, n.altitudeSigma].compactMap { $0 }
            check(numbers.allSatisfy(\.isFinite), "a number that is not finite")
            check(n.time.map(inYears) ?? true, "a time outside years 1 to 9999")
        case .sky(_, let used): check(used >= 0, "a negative count")
        case .devices(let count): check(count >= 0, "a negative count")
        case .device(let path, _): check(!path.isEmpty, "a device without a path")
        case .error, .version, .other: break
        }
        return problems
    }

    private static func inYears(_ date: Date) -> Bool {
        date.timeIntervalSince1970 >= -62_135_596_800 && date.timeIntervalSince1970 < 253_402_300_800
    }
}
