import AgentTestSupport
import GeofenceCore
import TestSupport
import Testing

@testable import AgentFormats
@testable import GeofenceAgent

/// What the `Config`, `Command`, `GPX` and `PointsCSV` fuzz targets found (Fuzz/Regressions), pinned:
/// errors echoed whatever they were given, at any length, and a GPX file's bad numbers were dropped
/// silently or passed on.
@Suite(.offTheCooperativePool(.computing)) struct ParserFindingsTests {
    let long = String(repeating: "x", count: 5_000)

    @Test func aConfigErrorDoesNotEchoAWholeKey() {
        #expect(throws: AgentError.self) {
            try AgentConfiguration.parse(
                Array(#"{"fleet":"a","vehicle":"b","mqtt":{"\#(long)":1}}"#.utf8), name: "c.json")
        }
        do {
            _ = try AgentConfiguration.parse(
                Array(#"{"fleet":"a","vehicle":"b","mqtt":{"\#(long)":1}}"#.utf8), name: "c.json")
        } catch {
            #expect(error.message.hasPrefix("c.json: mqtt.xxxx"))
            #expect(error.message.count < 300, "\(error.message.count) characters")
        }
    }

    @Test func aLongNumberInJSONIsClippedInItsError() {
        let digits = String(repeating: "9", count: 5_000)
        do { _ = try JSONParser.parse(Array("[\(digits)e999]".utf8)) } catch {
            #expect(error.message.count < 100 && error.message.contains("…"), "\(error.message.prefix(120))")
        }
    }

    @Test func anUnknownCommandIsClipped() {
        guard case .failure(let refusal) = AgentCommand.parse(Array(long.utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(refusal.reason.hasPrefix("unknown command 'xxxx") && refusal.reason.count < 200)
        // One character of many scalars (combining accents) is clipped by scalars.
        let accents = "e" + String(repeating: "\u{301}", count: 5_000)
        guard case .failure(let r2) = AgentCommand.parse(Array(accents.utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(r2.reason.unicodeScalars.count < 200)
    }

    @Test func theConfigurationPrintsAndReadsBack() throws {
        var c = AgentConfiguration(fleet: "acme", vehicle: "truck-7")
        c.mqtt.tls = .init(caFile: "ca.pem", certificateFile: nil, keyFile: "k.pem")
        c.replay = .init(gpx: "d.gpx", speedFactor: 12.5, horizontalAccuracy: 3, exitAtEnd: true)
        c.monitor.confidence = 0.9995
        c.liveUpdates.configuration = .fitness
        c.outbox.maximumRows = 77
        let printed = Array(c.json.jsonText.utf8)
        #expect(try AgentConfiguration.parse(printed, name: "printed") == c)
    }

    @Test(arguments: [
        ("<speed>-1</speed>", "drive.gpx:2: <speed> '-1' is not a speed in m/s, 0 or more"),
        ("<speed>nan</speed>", "drive.gpx:2: <speed> 'nan' is not a speed in m/s, 0 or more"),
        ("<course>400</course>", "drive.gpx:2: <course> '400' is not a course in degrees from 0 to 360"),
        ("<ele>high</ele>", "drive.gpx:2: <ele> 'high' is not an elevation in metres"),
    ])
    func aGPXPointsBadNumberIsRefusedWithItsLine(element: String, message: String) {
        let gpx =
            "<gpx version=\"1.0\"><trk><trkseg>\n<trkpt lat=\"52\" lon=\"5\">\(element)</trkpt>\n</trkseg></trk></gpx>"
        do {
            _ = try GPXTrack.parse(Array(gpx.utf8), name: "drive.gpx")
            Issue.record("accepted")
        } catch {
            #expect(error.message == message)
        }
    }
}

extension ParserFindingsTests {
    /// FoundationXML's parser crashed (a trap, the whole process) on a tag name that is not UTF-8.
    @Test func aGPXFileThatIsNotUTF8IsRefusedWithItsLine() {
        let bytes =
            Array("<?xml version=\"1.0\"?>\n<gpx version=\"1.0\"><trk><trkseg>\n<trkp".utf8) + [0xC0, 0x40]
            + Array(" lat=\"52\" lon=\"5\"/></trkseg></trk></gpx>".utf8)
        do {
            _ = try GPXTrack.parse(bytes, name: "drive.gpx")
            Issue.record("accepted")
        } catch {
            #expect(error.message == "drive.gpx:3: not a readable GPX file: the text is not UTF-8")
        }
    }
}

extension ParserFindingsTests {
    /// Foundation's ISO8601DateFormatter (ICU) trapped, dividing by zero, on a long fraction of a second.
    @Test func aTimeWithALongFractionIsRead() throws {
        let fraction = String(repeating: "8", count: 60)
        let gpx = "<gpx><wpt lat=\"1\" lon=\"2\"><time>2018-08-20T09:47:42.00\(fraction)Z</time></wpt></gpx>"
        let points = try GPXTrack.parse(Array(gpx.utf8), name: "drive.gpx")
        let t = try #require(points.first?.time).timeIntervalSince1970
        #expect(abs(t - 1_534_758_462.0089) < 0.001)
    }
}
