import AgentTestSupport
import Foundation
import TestSupport
import Testing

@Suite(.offTheCooperativePool(.waiting)) struct EvaluateCommandTests {
    @Test func printsOneLinePerPointWithSortedIds() throws {
        let r = try AgentBinary.run([
            "evaluate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"),
            "--points", AgentBinary.fixture("points.csv"),
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.lines == [
                #"{"point":0,"inside":["route","start-buoy"]}"#,
                #"{"point":1,"inside":["channel","route"]}"#,
                #"{"point":2,"inside":[]}"#,
            ])
    }

    @Test func aBadFeatureIsReportedAndTheGoodOnesStillEvaluate() throws {
        let conditions = try AgentBinary.temporaryFile(
            """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"ok","geometry":{"type":"Point","coordinates":[5,52]},"properties":{"radius":100}},
              {"type":"Feature","id":"bad","geometry":{"type":"Point","coordinates":[5,91.2]},"properties":{"radius":100}}
            ]}
            """, suffix: ".geojson")
        let points = try AgentBinary.temporaryFile("lat,lon\n52,5\n", suffix: ".csv")
        let r = try AgentBinary.run(["evaluate", "--conditions", conditions, "--points", points])
        #expect(r.status == 1)
        #expect(r.lines == [#"{"point":0,"inside":["ok"]}"#])
        #expect(
            r.stderr.contains("\(conditions): features[1].geometry.coordinates: latitude 91.2 is outside [-90, 90]"))
    }

    @Test func unusableInputSaysWhatAndWhere() throws {
        let points = try AgentBinary.temporaryFile("lat,lon\n52,5\n52,abc\n", suffix: ".csv")
        let r = try AgentBinary.run([
            "evaluate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--points", points,
        ])
        #expect(r.status == 2)
        #expect(r.stderr.contains("\(points):3: lon 'abc' is not a longitude in [-180, 180]"))

        let missing = try AgentBinary.run(["evaluate", "--conditions", "/nonexistent.geojson", "--points", points])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("conditions file '/nonexistent.geojson' does not exist"))

        let notJSON = try AgentBinary.temporaryFile("{\"type\":", suffix: ".geojson")
        let broken = try AgentBinary.run(["evaluate", "--conditions", notJSON, "--points", points])
        #expect(broken.status == 2)
        #expect(broken.stderr.contains("invalid JSON at line 1, column 9"))

        let noHeader = try AgentBinary.temporaryFile("x,y\n1,2\n", suffix: ".csv")
        let header = try AgentBinary.run([
            "evaluate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--points", noHeader,
        ])
        #expect(header.stderr.contains("the header must name 'lat' and 'lon' columns"))
    }

    @Test func aWrongFlagIsAUsageError() throws {
        let r = try AgentBinary.run(["evaluate", "--conditions", "a", "--points", "b", "--conditons", "a.geojson"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("Unknown option '--conditons'"))
        let caps = try AgentBinary.run(["evaluate", "--conditions", "a", "--points", "b", "--max-vertices", "0"])
        #expect(caps.stderr.contains("--max-vertices must be positive"))
    }
}
