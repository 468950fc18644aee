import Foundation
import GeofenceCore
import TestSupport
import Testing

@testable import Geocoding

/// Points on land near coasts and in overseas parts (issue 31): the coasts are simplified to about 1 km, so
/// a coastal city's edge can fall outside every outline, and outlines hold overseas parts whose places
/// GeoNames codes apart (Réunion in France's). Each must still get its place and its own country.
@Suite(.offTheCooperativePool(.computing)) struct CoastalPlacesTests {
    let g = TestGazetteer.shared

    /// `metres` from `origin` on `bearing` (radians), on a local tangent plane (fine at a few hundred metres).
    func offset(_ origin: Coordinate, metres: Double, bearing: Double) -> Coordinate {
        let north = metres * cos(bearing) / 111_132
        let east = metres * sin(bearing) / (111_320 * cos(origin.latitude * .pi / 180))
        return Coordinate(latitude: origin.latitude + north, longitude: remainder(origin.longitude + east, 360))
    }

    /// Every place of 100,000 people or more, every continent and coast included: a point 10–300 m away on a
    /// random bearing must be answered with the place nearest to it and that place's country (as GeoNames
    /// codes it), never with a place far away.
    @Test func pointsNearEveryCityOfAHundredThousandGetTheirPlaceAndCountry() throws {
        var rng = SplitMix64(seed: 31)
        var tested = 0
        var right = 0
        var misses: [String] = []
        for index in 0..<g.count where g.places[index].population >= 100_000 {
            let city = g.place(index)
            let q = offset(
                city.location, metres: Double.random(in: 10...300, using: &rng),
                bearing: Double.random(in: 0..<(2 * .pi), using: &rng))
            let nearest = try #require(g.tree.nearest(to: PreparedPoint.earthCentred(q)))
            let truth = g.place(nearest.index)
            let answer = try g.reverse(q)
            tested += 1
            #expect(answer.distance! < 5_000, "\(city.name) \(q): \(answer.name), \(answer.distance!) m away")
            let code = g.countryCodes[Int(g.places[nearest.index].country)]
            if answer.name == truth.name && answer.isoCountryCode == code {
                right += 1
            } else if misses.count < 20 {
                misses.append("\(truth.name), \(code) at \(q): \(answer.name), \(answer.isoCountryCode ?? "-")")
            }
        }
        let score = Double(right) / Double(tested)
        print("coastal and city check: \(right) of \(tested) right (\(String(format: "%.2f", score * 100))%)")
        #expect(tested > 4_000)
        #expect(score >= 0.995, "\(right) of \(tested): \(misses)")
    }

    /// The cities the issue named: 10–300 m from their centres, at sea by the simplified coast, or in an
    /// outline of another code.
    @Test(arguments: [
        ("Malabo", "GQ"), ("Mombasa", "KE"), ("Colombo", "LK"), ("Toulon", "FR"), ("Split", "HR"),
        ("Stavanger", "NO"), ("Darwin", "AU"), ("Saint-Paul", "RE"), ("Saint-Denis", "RE"),
    ])
    func namedCoastalCitiesGetTheirCountry(name: String, country: String) throws {
        let candidates = try g.forward(name, limit: 40).filter { $0.isoCountryCode == country }
        let city = try #require(candidates.first, "\(name), \(country) is in the gazetteer")
        for (k, metres) in [10.0, 120, 300].enumerated() {
            let q = offset(city.location, metres: metres, bearing: Double(k) * 2.1)
            let answer = try g.reverse(q)
            let said = "\(name) +\(metres) m: \(answer.name), \(answer.isoCountryCode ?? "-")"
            #expect(answer.isoCountryCode == country, "\(said)")
            #expect(answer.distance! < 5_000, "\(name) +\(metres) m: \(answer.name) \(answer.distance!) m away")
        }
    }

    /// The open sea beyond 12 nautical miles of any place still gets no country.
    @Test func theSeaBeyondTheTerritorialSeaGetsNoCountry() throws {
        for q in [Coordinate(latitude: 40, longitude: -30), Coordinate(latitude: -35, longitude: 80)] {
            let answer = try g.reverse(q)
            #expect(answer.isoCountryCode == nil && answer.distance! > Gazetteer.territorialSea, "\(q): \(answer)")
        }
    }
}
