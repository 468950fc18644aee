import Foundation
import TestSupport
import Testing

@testable import GeofenceCore

@Suite(.offTheCooperativePool(.computing)) struct PolygonVectorTests {
    @Test func agreesWithEveryGEOSLabel() throws {
        guard case .object(let root) = try JSONParser.parse(try Fixtures.bytes("point-in-polygon", "json")),
            case .array(let cases)? = root["cases"]
        else {
            Issue.record("fixture is not the expected shape")
            return
        }
        var checked = 0
        for (i, c) in cases.enumerated() {
            let doc: JSONValue = .object([
                "type": .string("Feature"), "id": .string("case\(i)"), "geometry": c["geometry"]!, "properties": .null,
            ])
            let load = GeoJSONConditions.decode(doc)
            try #require(load.errors.isEmpty, "case \(i): \(load.errors)")
            let region = load.definitions[0].condition.region
            // The box is what the index filters by: it must hold every vertex exactly.
            if case .polygon(let parts) = load.definitions[0].condition.geometry {
                for vertex in parts.joined().joined() {
                    #expect(
                        region.boundingBox.contains(longitude: vertex.longitude, latitude: vertex.latitude),
                        "case \(i): vertex \(vertex) outside its box")
                }
            }
            guard case .array(let points)? = c["points"] else { continue }
            for p in points {
                guard case .number(let lon)? = p["lon"], case .number(let lat)? = p["lat"],
                    case .bool(let inside)? = p["inside"]
                else { continue }
                let got = region.contains(PreparedPoint(Coordinate(latitude: lat, longitude: lon)))
                #expect(got == inside, "case \(i) (\(c["kind"]!)): point (\(lon), \(lat)) expected inside=\(inside)")
                checked += 1
            }
        }
        #expect(checked == 17_500)
    }
}
