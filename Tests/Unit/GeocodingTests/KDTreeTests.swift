import GeofenceCore
import TestSupport
import Testing

@testable import Geocoding

/// The k-d tree against a scan over every place, on the real gazetteer: the builder's order and the
/// agent's search must agree exactly, or the tree misses places near its splitting planes.
@Suite(.offTheCooperativePool(.computing)) struct KDTreeTests {
    let g = TestGazetteer.shared

    func scan(_ q: SIMD3<Double>, where accept: (Int) -> Bool = { _ in true }) -> (index: Int, chordSquared: Double) {
        var best = (index: -1, chordSquared: Double.infinity)
        for i in 0..<g.tree.count where accept(i) {
            let d = g.tree.chordSquared(i, q)
            if d < best.chordSquared { best = (i, d) }
        }
        return best
    }

    /// Each place, asked from its own position, finds itself (or a place at the same spot): a place on the
    /// wrong side of a splitting plane would be missed from there. (A builder that ordered places on the
    /// unit sphere, not the ellipsoid, misplaced 762 of them by up to 6.7 km.)
    @Test func everyPlaceFindsItself() {
        var missed: [Int] = []
        for i in 0..<g.tree.count {
            let q = SIMD3(Double(g.tree.xyz[3 * i]), Double(g.tree.xyz[3 * i + 1]), Double(g.tree.xyz[3 * i + 2])) / 100
            // Not exactly 0: x / 100 * 100 need not give x back.
            if g.tree.nearest(to: q)!.chordSquared > 1e-6 { missed.append(i) }
        }
        #expect(
            missed.count == 0,
            "\(missed.count) places not found from their own position, such as \(missed.prefix(5).map { g.coordinate(of: $0) })"
        )
    }

    @Test func everyNearestIsTheScansNearest() {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<60 {
            // Half anywhere, half within a few kilometres of a place, where planes pass close.
            let q: Coordinate
            if Bool.random(using: &rng) {
                q = Coordinate(
                    latitude: Double.random(in: -89...89, using: &rng),
                    longitude: Double.random(in: -180...180, using: &rng))
            } else {
                let c = g.coordinate(of: Int.random(in: 0..<g.count, using: &rng))
                q = Coordinate(
                    latitude: c.latitude + Double.random(in: -0.05...0.05, using: &rng),
                    longitude: c.longitude + Double.random(in: -0.05...0.05, using: &rng))
            }
            let p = PreparedPoint(q).earthCentred
            let tree = g.tree.nearest(to: p)!
            let expected = scan(p)
            #expect(
                tree.index == expected.index && tree.chordSquared == expected.chordSquared,
                "\(q): tree \(tree), scan \(expected)")
        }
    }

    @Test func everyNearestInACountryIsTheScansNearest() {
        var rng = SplitMix64(seed: 12)
        for _ in 0..<100 {
            let q = Coordinate(
                latitude: Double.random(in: -60...70, using: &rng),
                longitude: Double.random(in: -180...180, using: &rng))
            let country = g.countryIndex[Int.random(in: 0..<g.count, using: &rng)]
            let p = PreparedPoint(q).earthCentred
            let tree = g.countryIndex.withUnsafeBufferPointer {
                g.tree.nearest(to: p, where: InCountry(countries: $0, country: country))!
            }
            let expected = scan(p) { g.countryIndex[$0] == country }
            #expect(tree.index == expected.index, "\(q) in country \(country): tree \(tree), scan \(expected)")
        }
    }
}
