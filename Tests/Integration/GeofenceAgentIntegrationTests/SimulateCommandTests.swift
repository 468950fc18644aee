import AgentTestSupport
import Foundation
import TestSupport
import Testing

@Suite(.offTheCooperativePool(.waiting)) struct SimulateCommandTests {
    @Test func replaysARealTrackThroughTheMonitor() throws {
        let r = try AgentBinary.run([
            "simulate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"),
            "--track", AgentBinary.fixture("ijsselmeer-sail.gpx"), "--accuracy", "5",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let events = try r.lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        let summary = events.map { "\($0["identifier"]!) \($0["event"]!) \($0["state"]!) \($0["time"]!)" }
        // The margin for a 5 m fix is z(0.999) · 5/√2 = 10.9 m, and the first fix decides nothing until the
        // second shows the boat moving.
        #expect(
            summary == [
                "channel initial unsatisfied 2018-08-20T09:47:38.000Z",
                "gate initial unsatisfied 2018-08-20T09:47:38.000Z",
                "marina initial unsatisfied 2018-08-20T09:47:38.000Z",
                "route initial satisfied 2018-08-20T09:47:38.000Z",
                "start-buoy initial satisfied 2018-08-20T09:47:38.000Z",
                "start-buoy exit unsatisfied 2018-08-20T09:48:01.000Z",
                "channel enter satisfied 2018-08-20T09:48:28.000Z",
                "channel dwell satisfied 2018-08-20T09:48:48.000Z",
                "gate crossed unsatisfied 2018-08-20T09:48:48.000Z",
                "channel exit unsatisfied 2018-08-20T09:49:01.000Z",
            ])
        let exit = events[5]
        #expect(exit["lat"] as? Double == 52.849748333)
        #expect(exit["lon"] as? Double == 5.31275)
        #expect(exit["name"] as? String == "Start buoy")
        #expect(r.stderr.contains("simulate: 148 fixes (none rejected), 5 conditions, 10 events"))
    }

    @Test func poorAccuracyHoldsStatesBack() throws {
        // With 40 m accuracy the vehicle is never confidently inside the 60 m channel box's interior.
        let r = try AgentBinary.run([
            "simulate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"),
            "--track", AgentBinary.fixture("ijsselmeer-sail.gpx"), "--accuracy", "40",
        ])
        #expect(r.status == 0)
        #expect(!r.stdout.contains(#""identifier":"channel","event":"enter""#))
    }

    @Test func refusesATrackWithoutTimes() throws {
        let gpx = try AgentBinary.temporaryFile(
            """
            <?xml version="1.0"?>
            <gpx version="1.0"><trk><trkseg>
            <trkpt lat="52.1" lon="5.1"></trkpt>
            </trkseg></trk></gpx>
            """, suffix: ".gpx")
        let r = try AgentBinary.run([
            "simulate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--track", gpx,
        ])
        #expect(r.status == 2)
        #expect(r.stderr.contains("\(gpx):3: track point has no <time>"))
    }

    @Test func refusesMalformedGPX() throws {
        let gpx = try AgentBinary.temporaryFile(
            "<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"></trkseg>", suffix: ".gpx")
        let r = try AgentBinary.run([
            "simulate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--track", gpx,
        ])
        #expect(r.status == 2)
        #expect(r.stderr.contains("\(gpx):1: not a readable GPX file: a closing tag does not match its opening tag"))
        let badLat = try AgentBinary.temporaryFile(
            "<gpx><wpt lat=\"95\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></wpt></gpx>", suffix: ".gpx")
        let r2 = try AgentBinary.run([
            "simulate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--track", badLat,
        ])
        #expect(r2.stderr.contains("<wpt> needs lat in [-90, 90]"))
    }

    @Test func rejectsANegativeAccuracyFlag() throws {
        let r = try AgentBinary.run(["simulate", "--conditions", "x", "--track", "y", "--accuracy=-3"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--accuracy must be a non-negative number of metres"))
    }

    @Test func everySubcommandHasHelpWithAnExample() throws {
        for sub in ["evaluate", "simulate"] {
            let r = try AgentBinary.run([sub, "--help"])
            #expect(r.status == 0)
            #expect(r.stdout.contains("Example:"), "\(sub) --help")
        }
    }
}
