import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import GeofenceCore

@Suite(.offTheCooperativePool(.computing)) struct GeodesicVectorTests {
    struct Pair {
        var p: Coordinate
        var q: Coordinate
        var distance: Double
        var bearing: Double
    }

    static func pairs() throws -> [Pair] {
        let text = String(decoding: try Fixtures.bytes("wgs84-inverse", "csv"), as: UTF8.self)
        return text.split(whereSeparator: \.isNewline).dropFirst().map { line in
            let f = line.split(separator: ",").map { Double($0)! }
            return Pair(
                p: Coordinate(latitude: f[0], longitude: f[1]), q: Coordinate(latitude: f[2], longitude: f[3]),
                distance: f[4], bearing: f[5])
        }
    }

    @Test func everyGeographicLibDistanceWithinOneMillimetre() throws {
        let pairs = try Self.pairs()
        #expect(pairs.count == 6000)
        var worst = 0.0
        for pair in pairs {
            let d = Geodesic.distance(pair.p, pair.q)
            worst = max(worst, abs(d - pair.distance))
            #expect(abs(d - pair.distance) <= 0.001, "\(pair.p) → \(pair.q): \(d) vs \(pair.distance)")
        }
        #expect(worst < 0.001)
    }

    @Test func initialBearingsAgree() throws {
        for pair in try Self.pairs() where pair.distance > 1 {
            let b = Geodesic.inverse(pair.p, pair.q).initialBearing
            // Judged as the sideways miss at the far end, which is what a bearing error costs.
            let lateral = abs(wrappedLongitudeDelta(b - pair.bearing)) * .pi / 180 * pair.distance
            #expect(lateral < 0.001, "\(pair.p) → \(pair.q): \(b) vs \(pair.bearing)")
        }
    }

    @Test func chordBoundsBracketTheGeodesic() throws {
        for pair in try Self.pairs() {
            let c = ECEF(pair.p).chord(to: ECEF(pair.q))
            #expect(c <= pair.distance + 1e-6)
            if c < ChordBounds.maximumChord {
                #expect(ChordBounds.upper(chord: c) >= pair.distance, "\(pair.p) → \(pair.q)")
            }
        }
    }

    @Test func distanceIsSymmetricAndZeroOnItself() {
        let a = Coordinate(latitude: 52.1, longitude: 5.3)
        let b = Coordinate(latitude: -33.9, longitude: 151.2)
        #expect(Geodesic.distance(a, a) == 0)
        #expect(abs(Geodesic.distance(a, b) - Geodesic.distance(b, a)) < 1e-6)
        // Across the antimeridian the short way round.
        let west = Coordinate(latitude: 0, longitude: 179.9995)
        let east = Coordinate(latitude: 0, longitude: -179.9995)
        #expect(abs(Geodesic.distance(west, east) - 111.319_49) < 0.01)
    }
}

extension GeodesicVectorTests {
    @Test func shortChordsGiveTheGeodesicWithinThreeMillimetres() throws {
        var checked = 0
        for pair in try Self.pairs() {
            let c = ECEF(pair.p).chord(to: ECEF(pair.q))
            guard let d = Geodesic.distance(chord: c, atLatitude: pair.p.latitude) else {
                #expect(c > Geodesic.shortChordLimit)
                continue
            }
            checked += 1
            #expect(abs(d - pair.distance) <= 0.003, "\(pair.p) → \(pair.q): \(d) vs \(pair.distance)")
        }
        #expect(checked > 0)
    }

    /// Every latitude and bearing, 1 m to 40 km: the short formula against the full inverse
    /// (itself within a millimetre of GeographicLib, above).
    @Test func shortChordsAgreeWithTheInverseAnywhere() async {
        await propertyCheck(
            count: 3000, input: Gen.double(in: -85...85), Gen.double(in: -180...180), Gen.double(in: 0...360),
            Gen.double(in: 0...4.6)
        ) { latitude, longitude, bearing, log10Metres in
            let p = Coordinate(latitude: latitude, longitude: longitude)
            let q = offset(p, metres: pow(10, log10Metres), bearing: bearing)
            let c = ECEF(p).chord(to: ECEF(q))
            let d = try #require(Geodesic.distance(chord: c, atLatitude: latitude))
            #expect(abs(d - Geodesic.distance(p, q)) <= 0.003, "\(p) → \(q)")
        }
    }
}
