import AgentTestSupport
import Foundation
import TestSupport
import Testing

/// `geofence-agent map` as a technician runs it: the example drive drawn, the same bytes twice, and bad
/// input refused as `evaluate` and `simulate` refuse it.
@Suite(.offTheCooperativePool(.waiting)) struct MapCommandTests {
    func output() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("map-\(UUID().uuidString).svg").path
    }

    @Test func drawsTheDriveWithItsEventsAndPointsTheSameTwice() throws {
        let simulate = try AgentBinary.run([
            "simulate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--track",
            AgentBinary.fixture("ijsselmeer-sail.gpx"),
        ])
        let events = try AgentBinary.temporaryFile(simulate.stdout, suffix: ".jsonl")
        let arguments = [
            "map", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--track",
            AgentBinary.fixture("ijsselmeer-sail.gpx"),
            "--events", events, "--points", AgentBinary.fixture("points.csv"), "--size", "800x600",
        ]
        let (a, b) = (output(), output())
        let first = try AgentBinary.run(arguments + ["--out", a])
        let second = try AgentBinary.run(arguments + ["--out", b])
        #expect(first.status == 0 && second.status == 0, "\(first.stderr)")
        let svg = try String(contentsOfFile: a, encoding: .utf8)
        #expect(svg == (try String(contentsOfFile: b, encoding: .utf8)), "the same input gives the same bytes")
        #expect(svg.contains(#"width="800" height="600""#))
        for name in [
            "Buoyed channel", "Marina", "Planned route", "enter channel", "exit channel", "point inside",
            "point outside", "Natural Earth",
        ] {
            #expect(svg.contains(name), "\(name) is drawn")
        }
        #expect(svg.contains("<title>route</title></polyline>"), "the corridor is drawn as its band")
    }

    @Test func badInputIsRefusedWithWhatAndWhere() throws {
        let missing = try AgentBinary.run(["map", "--conditions", "/nonexistent.geojson", "--out", output()])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("conditions file '/nonexistent.geojson' does not exist"))

        let size = try AgentBinary.run([
            "map", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--out", output(), "--size", "big",
        ])
        #expect(size.status == 64)
        #expect(size.stderr.contains("--size must be WIDTHxHEIGHT in pixels"))

        let box = try AgentBinary.run([
            "map", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--out", output(), "--bbox", "5,53,6,52",
        ])
        #expect(box.status == 64)
        #expect(box.stderr.contains("--bbox must be west,south,east,north"))

        let events = try AgentBinary.temporaryFile(
            #"{"event":"enter","identifier":"a","lat":52,"lon":5}"# + "\n{oops\n", suffix: ".jsonl")
        let badEvents = try AgentBinary.run([
            "map", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--events", events, "--out", output(),
        ])
        #expect(badEvents.status == 2)
        #expect(badEvents.stderr.contains("\(events):2: not a JSON event"))

        let conditions = try AgentBinary.temporaryFile(
            """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"ok","geometry":{"type":"Point","coordinates":[5,52]},"properties":{"radius":100}},
              {"type":"Feature","id":"bad","geometry":{"type":"Point","coordinates":[5,91.2]},"properties":{"radius":100}}
            ]}
            """, suffix: ".geojson")
        let out = output()
        let partly = try AgentBinary.run(["map", "--conditions", conditions, "--out", out])
        #expect(partly.status == 1, "the good features are drawn, and the status says some were refused")
        #expect(
            partly.stderr.contains(
                "\(conditions): features[1].geometry.coordinates: latitude 91.2 is outside [-90, 90]"))
        #expect((try? String(contentsOfFile: out, encoding: .utf8))?.contains("<title>ok</title>") == true)
    }
}
