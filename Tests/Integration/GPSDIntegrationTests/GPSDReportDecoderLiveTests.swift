import Foundation
import GPSDTestSupport
import GeofenceCore
import LocalServers
import TestSupport
import Testing

@testable import GPSD

#if canImport(Glibc)
    import Glibc
#endif

/// What a real gpsd sends for real captures, with its times, devices and session reports, read both ways.
@Suite(.offTheCooperativePool(.waiting)) struct GPSDReportDecoderLiveTests {
    @Test(arguments: ["ublox-neo-m9n-nmea", "bundg_zeus_9", "sl869"])
    func agreesWithLibgpsOnWhatGPSDSends(log: String) throws {
        let rig = try GPSDRig(log: log)
        defer { rig.stop() }
        let lines = try RawGPSDClient.lines(port: rig.gpsd.port, until: { rig.feed.linesSent == rig.feed.lineCount })
        var kinds = Set<String>()
        var timedFixes = 0
        for line in lines {
            let ours = GPSDReportDecoder.decode(line)
            #expect(nearlyEqual(ours, LibgpsOracle.decode(line)), "\(line)")
            kinds.insert(kind(ours))
            if case .fix(let report) = ours {
                #expect(report.device != nil, "\(line)")
                if report.time != nil { timedFixes += 1 }
            }
        }
        #expect(kinds.isSuperset(of: ["version", "devices", "device", "fix", "sky"]), "\(kinds)")
        #expect(timedFixes >= 5, "the times were compared")
    }
}

/// A bare socket client of gpsd: WATCH, then every line until the feed is through and gpsd is quiet.
enum RawGPSDClient {
    static func lines(port: Int, until done: () -> Bool) throws -> [String] {
        guard let fd = LoopbackConnection.open(port: port) else { throw POSIXError(.ECONNREFUSED) }
        defer { close(fd) }
        let watch = Array("?WATCH={\"enable\":true,\"json\":true}\n".utf8)
        _ = watch.withUnsafeBytes { write(fd, $0.baseAddress, watch.count) }
        let reader = GPSDLineReader()
        var lines: [String] = []
        var quietSince = Date()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if try reader.read(fd: fd, waitingUpTo: 100_000) {
                reader.forEachLine { lines.append(String(decoding: $0, as: UTF8.self)) }
                quietSince = Date()
            } else if done(), Date().timeIntervalSince(quietSince) > 0.5 {
                break
            }
        }
        return lines
    }
}
