import Foundation
import GPSDTestSupport
import GeofenceCore
import LocalServers
import PropertyBased
import TestSupport
import Testing

@testable import GPSD

/// The agent's own reader of gpsd's reports, held to libgps's reading of the same lines.
@Suite(.offTheCooperativePool(.computing)) struct GPSDReportDecoderTests {
    /// Every JSON report in the gpsd project's regression outputs for the bundled captures (gpsd 3.22).
    @Test func agreesWithLibgpsOnEveryReportOfTheCaptures() throws {
        var counts: [String: Int] = [:]
        for name in GPSDFixtures.all {
            let text = try String(contentsOf: GPSDFixtures.chk(name), encoding: .utf8)
            for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("{") {
                let line = String(line)
                let ours = GPSDReportDecoder.decode(line)
                let theirs = LibgpsOracle.decode(line)
                #expect(nearlyEqual(ours, theirs), "\(name): \(line)\nours: \(ours)\nlibgps: \(theirs)")
                counts[kind(ours), default: 0] += 1
            }
        }
        // The comparison means something only if the reports were read as what they are.
        #expect(counts["fix", default: 0] >= 2_900, "\(counts)")
        #expect(counts["sky", default: 0] >= 400, "\(counts)")
        #expect(counts["noise", default: 0] >= 60, "\(counts)")
    }

    /// What libgps 3.22 cannot read: a removed receiver's `"activated":0`.
    @Test func aRemovedReceiverIsInactive() {
        let line = #"{"class":"DEVICE","path":"/dev/ttyUSB0","driver":"NMEA0183","activated":0}"#
        #expect(GPSDReportDecoder.decode(line) == .device(path: "/dev/ttyUSB0", active: false))
        let active = #"{"class":"DEVICE","path":"/dev/ttyUSB0","activated":"2026-11-22T08:00:00.000Z"}"#
        #expect(GPSDReportDecoder.decode(active) == .device(path: "/dev/ttyUSB0", active: true))
    }

    @Test func readsAnyKeyOrderSpacingAndEscapes() {
        let line = """
             { "lat" : 52.5 , "nested":{"a":[1,{"b":"}"}]},"device":"/dev/pts\\/3 \\"x\\" \\u00e9",
            "mode":3,"unknown":null,"flag":true,"class":"TPV","time":"2026-11-22T08:00:01.25Z","lon":-4.25e0 }
            """
        let message = GPSDReportDecoder.decode(line, receivedAt: 7)
        let expected = ReceiverReport(
            mode: 3, device: "/dev/pts/3 \"x\" é", time: Date(timeIntervalSince1970: 1_795_334_401.25),
            latitude: 52.5, longitude: -4.25, receivedAtNanoseconds: 7)
        #expect(message == .fix(expected))
    }

    @Test func classesTheAgentUses() {
        #expect(GPSDReportDecoder.decode(#"{"class":"DEVICES","devices":[]}"#) == .devices(count: 0))
        #expect(
            GPSDReportDecoder.decode(#"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/a"},{"path":"/b"}]}"#)
                == .devices(count: 2))
        #expect(
            GPSDReportDecoder.decode(#"{"class":"ERROR","message":"Unrecognized request"}"#)
                == .error("Unrecognized request"))
        #expect(GPSDReportDecoder.decode(#"{"class":"VERSION","release":"3.22","proto_major":3}"#) == .version)
        #expect(GPSDReportDecoder.decode(#"{"class":"SKY","hdop":1.2}"#) == .other, "DOPs only")
        #expect(
            GPSDReportDecoder.decode(#"{"class":"SKY","satellites":[{"PRN":1,"used":true},{"used":false}]}"#)
                == .sky(device: nil, satellitesUsed: 1))
        #expect(GPSDReportDecoder.decode(#"{"class":"TPV","lat":1}"#) == .other, "a TPV without a mode")
        #expect(GPSDReportDecoder.decode(#"{"class":"TPV","mode":34000}"#) == .other, "no mode gpsd has")
        #expect(GPSDReportDecoder.decode(#"{"class":"WATCH","enable":true}"#) == .other)
        #expect(GPSDReportDecoder.decode(#"{"class":"VERSION","x":e5}"#) == .other, "no value")
        // Nesting is followed 32 deep, not down the stack: a line of 60,000 brackets is refused.
        let nested =
            "{\"class\":\"VERSION\",\"x\":" + String(repeating: "[", count: 30) + String(repeating: "]", count: 30)
        #expect(GPSDReportDecoder.decode(nested + "}") == .version)
        #expect(
            GPSDReportDecoder.decode("{\"class\":\"VERSION\",\"x\":" + String(repeating: "[", count: 60_000)) == .other)
    }

    @Test func keyCodesAreThePackedKeys() {
        let keys: [(UInt64, StaticString)] = [
            (ReportFields.Key.class, "class"), (ReportFields.Key.device, "device"), (ReportFields.Key.time, "time"),
            (ReportFields.Key.mode, "mode"), (ReportFields.Key.status, "status"), (ReportFields.Key.lat, "lat"),
            (ReportFields.Key.lon, "lon"), (ReportFields.Key.alt, "alt"), (ReportFields.Key.altHAE, "altHAE"),
            (ReportFields.Key.altMSL, "altMSL"), (ReportFields.Key.epx, "epx"), (ReportFields.Key.epy, "epy"),
            (ReportFields.Key.eph, "eph"), (ReportFields.Key.epv, "epv"), (ReportFields.Key.eps, "eps"),
            (ReportFields.Key.epd, "epd"), (ReportFields.Key.epc, "epc"), (ReportFields.Key.speed, "speed"),
            (ReportFields.Key.track, "track"), (ReportFields.Key.climb, "climb"), (ReportFields.Key.path, "path"),
            (ReportFields.Key.devices, "devices"), (ReportFields.Key.message, "message"),
            (ReportFields.Key.used, "used"), (ReportFields.Class.tpv, "TPV"), (ReportFields.Class.gst, "GST"),
            (ReportFields.Class.sky, "SKY"), (ReportFields.Class.device, "DEVICE"),
            (ReportFields.Class.devices, "DEVICES"), (ReportFields.Class.error, "ERROR"),
            (ReportFields.Class.version, "VERSION"),
        ]
        for (code, key) in keys { #expect(code == JSONKey.code(key), "\(key)") }
    }

    /// Random reports written as gpsd writes them, with their keys shuffled and unknown keys between them,
    /// read back as written and as libgps reads them.
    @Test func randomReportsReadBackAsWritten() async {
        await propertyCheck(count: 500, input: Gen.uint64()) { seed in
            var random = SplitMix64(seed: seed)
            let (line, expected) = RandomReport.make(&random)
            let ours = GPSDReportDecoder.decode(line)
            #expect(ours == expected, "\(line)")
            #expect(nearlyEqual(ours, LibgpsOracle.decode(line)), "\(line)")
        }
    }

    /// Numbers as gpsd prints them (%.9f and friends) and in any JSON form: the double strtod gives.
    @Test func numbersAreCorrectlyRounded() async {
        await propertyCheck(count: 3000, input: Gen.uint64()) { seed in
            var random = SplitMix64(seed: seed)
            let text = RandomReport.number(&random)
            let parsed = text.utf8CString.withUnsafeBufferPointer { strtod($0.baseAddress!, nil) }
            let ours = Array(text.utf8).withUnsafeBufferPointer {
                DecimalNumber.parse($0.baseAddress!, count: $0.count)
            }
            #expect(ours?.bitPattern == parsed.bitPattern, "\(text)")
        }
        for bad in ["", "-", ".", "1.", ".5", "1e", "1e+", "--1", "1.2.3", "0x10", "1,5"] {
            let parsed = Array(bad.utf8).withUnsafeBufferPointer { p in
                p.baseAddress.flatMap { DecimalNumber.parse($0, count: p.count) }
            }
            #expect(parsed == nil, "\(bad)")
        }
    }

    /// Every millisecond from 1970 to 2100, as gpsd writes it.
    @Test func timesReadAsFoundationReadsThem() async {
        await propertyCheck(count: 2000, input: Gen.int(in: 0...4_102_444_799_999)) { milliseconds in
            // Foundation's style truncates to the millisecond: format a time a little past it.
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = date.addingTimeInterval(0.0002).formatted(
                Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
            let parsed = GPSDTime.parse(text)
            #expect(parsed.map { abs($0.timeIntervalSince(date)) < 1e-6 } == true, "\(text)")
        }
        for bad in [
            "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-22 08:00:00Z", "2026-11-22T08:00:00",
            "2026-11-22T08:00:00.Z", "2026-11-22T08:00:00.1234567890Z", "2026-11-22T24:00:00Z", "0000-12-31T23:59:59Z",
        ] {
            #expect(GPSDTime.parse(bad) == nil, "\(bad)")
        }
        #expect(GPSDTime.parse("2024-02-29T23:59:59.5Z") == Date(timeIntervalSince1970: 1_709_251_199.5))
    }

    /// Every prefix of real reports, and random damage to them: never a crash, and a broken object is
    /// `.other`, never half a fix.
    @Test func brokenLinesAreOtherAndNeverCrash() throws {
        let text = try String(contentsOf: GPSDFixtures.chk("bundg_zeus_9"), encoding: .utf8)
        let lines = text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("{") }.prefix(40).map(String.init)
        #expect(lines.count == 40)
        var random = SplitMix64(seed: 31)
        for line in lines {
            let bytes = Array(line.utf8)
            for end in 0..<bytes.count - 1 {
                let prefix = String(decoding: bytes[..<end], as: UTF8.self)
                #expect(GPSDReportDecoder.decode(prefix) == .other, "\(prefix)")
            }
            for _ in 0..<50 {
                var damaged = bytes
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(
                        in: 0...255, using: &random)
                }
                _ = damaged.withUnsafeBytes { GPSDReportDecoder.decode($0, receivedAt: 0) }
            }
        }
    }
}
