import Foundation
import GeofenceCore
import TestSupport
import Testing

@testable import Geocoding

/// The builder's border clearances and clean grid cells, on which a reverse lookup skips the outline test:
/// every point within a place's clearance must lie in the place's outline (or in none when the place is in
/// none), every point of a clean cell in the cell's, and the shortcuts must answer exactly as testing every
/// outline does.
@Suite(.offTheCooperativePool(.computing)) struct ClearanceTests {
    let g = TestGazetteer.shared

    /// A point about `chord` metres from `place` on a bearing, moved until its chord is just below it.
    func point(near place: Coordinate, chord: Double, bearing: Double) -> Coordinate? {
        let centre = PreparedPoint(place).earthCentred
        var r = chord
        for _ in 0..<4 {
            let north = r * cos(bearing) / 111_132
            let east = r * sin(bearing) / (111_320 * max(cos(place.latitude * .pi / 180), 1e-6))
            let c = Coordinate(latitude: place.latitude + north, longitude: remainder(place.longitude + east, 360))
            guard c.isValid else { return nil }
            let d = PreparedPoint(c).earthCentred - centre
            let actual = (d * d).sum().squareRoot()
            if actual < chord, actual > chord * 0.98 { return c }
            r *= chord * 0.99 / actual
        }
        return nil
    }

    @Test func nearlyEveryPlaceHasAClearance() {
        let with = (0..<g.count).filter { g.places[$0].clearanceMetres > 0 }.count
        #expect(Double(with) / Double(g.count) > 0.95, "\(with) of \(g.count) places have a clearance")
    }

    /// Points at the edge of random places' clearances, where an error in the builder's bound would show.
    @Test func everyPointWithinAPlacesClearanceLiesInItsOutline() {
        var rng = SplitMix64(seed: 21)
        var tested = 0
        var wrong: [String] = []
        for _ in 0..<4_000 {
            let i = Int.random(in: 0..<g.count, using: &rng)
            let record = g.places[i]
            guard record.clearanceMetres > 0 else { continue }
            let expected = record.isOutsideOutlines ? nil : Int(record.country)
            for _ in 0..<8 {
                let bearing = Double.random(in: 0..<(2 * .pi), using: &rng)
                guard let q = point(near: record.coordinate, chord: record.clearanceMetres, bearing: bearing) else {
                    continue
                }
                tested += 1
                let holder = g.country(at: PreparedPoint(q))
                if holder != expected {
                    wrong.append(
                        "\(q) within \(record.clearanceMetres) m of \(record.coordinate): \(String(describing: holder))"
                    )
                }
            }
        }
        #expect(tested > 25_000)
        #expect(wrong.isEmpty, "\(wrong.count) of \(tested) points: \(wrong.prefix(5))")
    }

    /// Random points of random clean cells, their corners and edges included.
    @Test func everyPointOfACleanCellLiesInItsOutline() {
        var rng = SplitMix64(seed: 23)
        var tested = 0
        var wrong: [String] = []
        let step = GazetteerFormat.gridDegrees
        while tested < 30_000 {
            let row = Int.random(in: 0..<GazetteerFormat.gridRows, using: &rng)
            let column = Int.random(in: 0..<GazetteerFormat.gridColumns, using: &rng)
            let south = Double(row) * step - 90
            let west = Double(column) * step - 180
            let edge = Int.random(in: 0..<4, using: &rng)
            let q = Coordinate(
                latitude: edge == 0 ? south : Double.random(in: south...(south + step), using: &rng),
                longitude: edge == 1 ? west : Double.random(in: west...(west + step), using: &rng))
            guard case .some(let holder) = g.cleanCell(q) else { continue }
            tested += 1
            let outline = g.outlines.country(at: PreparedPoint(q))
            if outline != holder {
                wrong.append("\(q): grid \(String(describing: holder)), outlines \(String(describing: outline))")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(tested) points: \(wrong.prefix(5))")
    }

    @Test func mostGridCellsAreClean() {
        let clean = g.cleanCells.filter { $0 != 0 }.count
        #expect(Double(clean) / Double(g.cleanCells.count) > 0.85, "\(clean) of \(g.cleanCells.count) cells")
    }

    /// Anywhere on earth (sea and poles too) and close to places, the shortcut gives the same placemark.
    @Test func theShortcutAnswersAsEveryOutlineTested() throws {
        var rng = SplitMix64(seed: 22)
        var differ: [String] = []
        for k in 0..<30_000 {
            let q: Coordinate
            if k % 2 == 0 {
                // Uniform over the sphere.
                q = Coordinate(
                    latitude: asin(Double.random(in: -1...1, using: &rng)) * 180 / .pi,
                    longitude: Double.random(in: -180...180, using: &rng))
            } else {
                let c = g.coordinate(of: Int.random(in: 0..<g.count, using: &rng))
                q = Coordinate(
                    latitude: min(max(c.latitude + Double.random(in: -0.3...0.3, using: &rng), -90), 90),
                    longitude: remainder(c.longitude + Double.random(in: -0.3...0.3, using: &rng), 360))
            }
            let fast = try g.reverse(q, usingShortcuts: true)
            let full = try g.reverse(q, usingShortcuts: false)
            if fast != full {
                differ.append(
                    "\(q): \(fast.name), \(fast.isoCountryCode ?? "-") against \(full.name), \(full.isoCountryCode ?? "-")"
                )
            }
        }
        #expect(differ.isEmpty, "\(differ.count) differ: \(differ.prefix(5))")
    }
}
