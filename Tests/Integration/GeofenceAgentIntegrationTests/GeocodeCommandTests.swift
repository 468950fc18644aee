import AgentTestSupport
import Foundation
import TestSupport
import Testing

/// `geocode` and `reverse` run as binaries, on the gazetteer scripts/setup builds.
@Suite(.offTheCooperativePool(.waiting)) struct GeocodeCommandTests {
    @Test func reverseNamesThePlaceAndItsDistance() throws {
        let r = try AgentBinary.run(["reverse", "52.5168", "6.0830"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("Zwolle, Overijssel, NL"))
        let json = try AgentBinary.run(["reverse", "--json", "--", "-33.8679", "151.2073"])
        #expect(json.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        #expect(object["name"] as? String == "Sydney")
        #expect(object["isoCountryCode"] as? String == "AU")
        #expect(object["timeZone"] as? String == "Australia/Sydney")
        #expect((object["distance"] as? Double ?? 1e9) < 2000)
    }

    @Test func geocodeRanksByPopulationAndTakesQualifiers() throws {
        let r = try AgentBinary.run(["geocode", "paris", "--limit", "2", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.count == 2)
        #expect(r.lines[0].contains(#""isoCountryCode":"FR""#))
        let us = try AgentBinary.run(["geocode", "Paris, US", "--limit", "1"])
        #expect(us.stdout.hasPrefix("Paris, Texas, US"))
        let none = try AgentBinary.run(["geocode", "Xqzzyplorf"])
        #expect(none.status == 1)
        #expect(none.stderr.contains(#"no place matches "Xqzzyplorf""#))
    }

    @Test func manyQueriesAnswerOneLineEachInOrder() throws {
        let r = try AgentBinary.run(["geocode"], stdin: "Zurich\n\nMunich\nXqzzyplorf\n")
        #expect(r.status == 1)
        #expect(r.lines.count == 4)
        #expect(r.lines[0].contains(#""name":"Zürich""#))
        #expect(r.lines[1] == "{}")
        #expect(r.lines[2].contains(#""isoCountryCode":"DE""#))
        #expect(r.lines[3] == "{}")
        #expect(r.stderr.contains("stdin:2: the query is empty"))
        #expect(r.stderr.contains("stdin:4: no place matches"))

        let csv = try AgentBinary.run(
            ["reverse"], stdin: "name,lon,lat\na,6.0830,52.5168\nb,8.54,47.37\nc,abc,1\nd,0,95\n")
        #expect(csv.lines.count == 4)
        #expect(csv.lines[0].contains(#""name":"Zwolle""#))
        #expect(csv.lines[1].contains(#""isoCountryCode":"CH""#))
        #expect(csv.lines[2] == "{}" && csv.lines[3] == "{}")
        #expect(csv.stderr.contains("stdin:4: expected a latitude and a longitude"))
        #expect(csv.stderr.contains("stdin:5: latitude must be in [-90, 90]"))
        #expect(csv.status == 1)

        let plain = try AgentBinary.run(["reverse"], stdin: "52.5168,6.0830\n")
        #expect(plain.status == 0 && plain.lines.count == 1 && plain.lines[0].contains("Zwolle"))
    }

    @Test func badArgumentsSayWhatIsWrong() throws {
        let one = try AgentBinary.run(["reverse", "52.5"])
        #expect(one.status == 64)
        #expect(one.stderr.contains("give a latitude and a longitude"))
        let range = try AgentBinary.run(["reverse", "91", "6"])
        #expect(range.status == 64)
        #expect(range.stderr.contains("latitude 91.0 is not in [-90, 90]"))
        let noData = try AgentBinary.run(["geocode", "Zwolle", "--gazetteer", "/nonexistent/gazetteer.bin"])
        #expect(noData.status == 2)
        #expect(noData.stderr.contains("the gazetteer is not loaded: cannot read /nonexistent/gazetteer.bin"))
        let help = try AgentBinary.run(["geocode", "--help"])
        #expect(help.stdout.contains("GeoNames (geonames.org), CC BY 4.0"))
    }
}
