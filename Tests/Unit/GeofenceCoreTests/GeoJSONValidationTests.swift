import Foundation
import TestSupport
import Testing

@testable import GeofenceCore

@Suite(.offTheCooperativePool(.computing)) struct GeoJSONValidationTests {
    let circle = #"{"type":"Point","coordinates":[5.3,52.1]}"#
    let square = #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}"#

    func collection(_ features: String...) -> String {
        #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#
    }

    /// Decodes a one-feature collection and returns its single error's text.
    func error(of f: String) -> String {
        let load = decode(collection(f))
        #expect(load.definitions.isEmpty)
        return load.errors.first?.description ?? "no error"
    }

    @Test func readsEveryKindOfCondition() throws {
        let load = decode(
            collection(
                feature("depot", circle, #"{"radius":150,"name":"Depot","dwell":60,"monitor":"fleet","version":3}"#),
                feature("yard", square),
                feature("route", #"{"type":"LineString","coordinates":[[0,0],[0.1,0.1]]}"#, #"{"width":25}"#),
                feature(
                    "islands",
                    #"{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[5,5],[6,5],[6,6],[5,5]]]]}"#)
            ))
        #expect(load.errors.isEmpty)
        #expect(load.definitions.map(\.identifier) == ["depot", "yard", "route", "islands"])
        let depot = load.definitions[0]
        #expect(depot.condition.name == "Depot")
        #expect(depot.condition.dwell == 60)
        #expect(depot.condition.version == 3)
        #expect(depot.monitor == "fleet")
        #expect(depot.condition.geometry == .circle(center: Coordinate(latitude: 52.1, longitude: 5.3), radius: 150))
        guard case .corridor(_, let width) = load.definitions[2].condition.geometry else {
            Issue.record("not a corridor")
            return
        }
        #expect(width == 25)
    }

    @Test func aSingleFeatureIsAccepted() {
        let load = decode(feature("one", circle, #"{"radius":10}"#))
        #expect(load.errors.isEmpty && load.definitions.count == 1)
    }

    @Test func invalidJSONSaysWhere() {
        let load = decode("{\"type\": \"Feature\",\n \"id\": }")
        #expect(
            load.errors.map(\.description) == [
                "invalid JSON at line 2, column 8: unexpected character '}', expected a value"
            ])
    }

    @Test func namesThePlaceOfABadLatitude() {
        let bad = #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,91.2],[0,0]]]}"#
        let load = decode(
            collection(feature("a", square), feature("b", square), feature("c", square), feature("d", bad)))
        #expect(load.definitions.count == 3, "the good features still load")
        #expect(
            load.errors.map(\.description) == [
                "features[3].geometry.coordinates[0][4]: latitude 91.2 is outside [-90, 90]"
            ])
        #expect(load.errors.first?.identifier == "d")
    }

    @Test func rejectsBadIdentifiers() {
        #expect(
            error(of: #"{"type":"Feature","geometry":\#(circle),"properties":{"radius":5}}"#)
                == "features[0].id: missing id: every condition needs a string id")
        #expect(error(of: feature("", circle, #"{"radius":5}"#)) == "features[0].id: id is empty")
        #expect(error(of: feature("a/b", circle, #"{"radius":5}"#)).contains("contains '/'"))
        #expect(error(of: feature("a+", circle, #"{"radius":5}"#)).contains("MQTT wildcard"))
        #expect(error(of: feature("a#", circle, #"{"radius":5}"#)).contains("MQTT wildcard"))
        #expect(
            error(of: #"{"type":"Feature","id":7,"geometry":\#(circle),"properties":{"radius":5}}"#)
                == "features[0].id: id must be a string, found number")
    }

    @Test func rejectsWrongTypes() {
        #expect(
            error(of: feature("a", circle, #"{"radius":"5"}"#))
                == "features[0].properties.radius: expected a number, found string")
        #expect(
            error(of: feature("a", circle, #"{"radius":5,"dwell":"long"}"#))
                == "features[0].properties.dwell: expected a number, found string")
        #expect(
            error(of: feature("a", circle, #"{"radius":5,"name":3}"#))
                == "features[0].properties.name: expected a string, found number")
        #expect(
            error(of: feature("a", #"{"type":"Point","coordinates":"x"}"#, #"{"radius":5}"#))
                == "features[0].geometry.coordinates: expected a position [longitude, latitude], found string")
        #expect(error(of: feature("a", circle, #"{"radius":5,"version":1.5}"#)).contains("whole number"))
        #expect(
            error(of: feature("a", circle, #"[1]"#))
                == "features[0].properties: expected an object or null, found array")
    }

    @Test func rejectsOutOfRangeAndNonFiniteCoordinates() {
        #expect(
            error(of: feature("a", #"{"type":"Point","coordinates":[181,0]}"#, #"{"radius":5}"#))
                == "features[0].geometry.coordinates: longitude 181 is outside [-180, 180]")
        // Beyond a Double's range, the parser refuses the number where it stands (it read infinity before).
        #expect(
            error(of: feature("a", #"{"type":"Point","coordinates":[1e999,0]}"#, #"{"radius":5}"#))
                == "invalid JSON at line 1, column 110: number '1e999' is out of range")
        #expect(
            error(of: feature("a", #"{"type":"Point","coordinates":[1]}"#, #"{"radius":5}"#)).contains(
                "at least 2 numbers"))
        // NaN is not JSON at all.
        #expect(
            decode(feature("a", #"{"type":"Point","coordinates":[NaN,0]}"#, #"{"radius":5}"#)).errors.first?.description
                .hasPrefix("invalid JSON") == true)
    }

    @Test func rejectsBadRadii() {
        #expect(
            error(of: feature("a", circle, #"{"radius":0}"#))
                == "features[0].properties.radius: radius 0.0 must be a positive number of metres")
        #expect(error(of: feature("a", circle, #"{"radius":-3}"#)).contains("must be a positive"))
        #expect(error(of: feature("a", circle, #"{"radius":20000001}"#)).contains("larger than 20,000 km"))
        #expect(
            error(of: feature("a", circle))
                == "features[0].properties.radius: a Point needs properties.radius (metres) to be a circle")
        #expect(
            error(of: feature("a", #"{"type":"LineString","coordinates":[[0,0],[1,1]]}"#)).contains(
                "needs properties.width"))
    }

    @Test func rejectsBadRings() {
        #expect(
            error(of: feature("a", #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}"#))
                == "features[0].geometry.coordinates[0][3]: ring is not closed: the last position must equal the first")
        #expect(
            error(of: feature("a", #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}"#))
                == "features[0].geometry.coordinates[0]: ring has 3 positions; a closed ring needs at least 4")
        // A bow tie: edge 0–1 crosses edge 2–3.
        #expect(
            error(of: feature("a", #"{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}"#))
                == "features[0].geometry.coordinates[0][2]: ring intersects itself: edge 0–1 meets edge 2–3")
        // A hole that intersects itself is named by its own index.
        let hole =
            #"{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]],[[1,1],[2,2],[2,1],[1,2],[1,1]]]}"#
        #expect(
            error(of: feature("a", hole)).hasPrefix("features[0].geometry.coordinates[1][2]: ring intersects itself"))
        // Touching itself at a vertex is as bad as crossing.
        #expect(
            error(of: feature("a", #"{"type":"Polygon","coordinates":[[[0,0],[2,0],[1,1],[2,2],[0,2],[1,1],[0,0]]]}"#))
                .contains("intersects itself"))
        // Repeated positions are allowed.
        #expect(
            decode(feature("a", #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,0],[1,1],[0,0]]]}"#)).errors.isEmpty)
    }

    @Test func rejectsDuplicateIdentifiersButKeepsTheFirst() {
        let load = decode(
            collection(feature("a", square), feature("b", square), feature("a", circle, #"{"radius":4}"#)))
        #expect(load.definitions.map(\.identifier) == ["a", "b"])
        #expect(load.errors.map(\.description) == ["features[2].id: duplicate id 'a' (first at features[0])"])
    }

    @Test func rejectsUnsupportedGeometries() {
        #expect(
            error(of: feature("a", #"{"type":"MultiPoint","coordinates":[[0,0]]}"#)).hasPrefix(
                "features[0].geometry.type: unsupported geometry 'MultiPoint'"))
        #expect(error(of: feature("a", "null")) == "features[0].geometry: expected a geometry object, found null")
        #expect(
            decode(#"{"type":"GeometryCollection"}"#).errors.first?.description.contains("unsupported GeoJSON type")
                == true)
        #expect(decode("[]").errors.first?.description == "expected a GeoJSON object, found array")
    }

    @Test func enforcesPayloadAndVertexCaps() {
        let limits = GeoJSONLimits(maximumPayloadBytes: 100, maximumVerticesPerCondition: 4)
        #expect(
            decode(collection(feature("a", square)), limits: limits).errors.first?.description.contains(
                "exceeds the limit of 100 bytes") == true)
        let roomy = GeoJSONLimits(maximumPayloadBytes: 10_000, maximumVerticesPerCondition: 4)
        #expect(
            decode(collection(feature("a", square)), limits: roomy).errors.first?.description
                == "features[0].geometry.coordinates[0]: more than 4 positions in one condition (the configured limit)")
    }

    @Test func defaultsAdmitATenThousandVertexGeofence() throws {
        // A 10,000-vertex circle-like ring, validated (including the self-intersection sweep).
        let n = 10_000
        var ring: [String] = []
        for k in 0..<n {
            let a = Double(k) / Double(n) * 2 * .pi
            ring.append("[\(5 + 0.1 * cos(a)),\(52 + 0.06 * sin(a))]")
        }
        ring.append(ring[0])
        let polygon = #"{"type":"Polygon","coordinates":[[\#(ring.joined(separator: ","))]]}"#
        let load = decode(feature("big", polygon))
        #expect(load.errors.isEmpty)
        let region = try #require(load.definitions.first).condition.region
        #expect(region.contains(PreparedPoint(Coordinate(latitude: 52, longitude: 5))))
        #expect(!region.contains(PreparedPoint(Coordinate(latitude: 52.07, longitude: 5))))
    }
}
