import Foundation
import PropertyBased
import Testing
@testable import GeofenceCore

/// A cell mask may only say what the exact test would say: a covered sub-cell holds no point outside
/// the region, and a sub-cell in neither set holds no point inside it.
@Suite struct CellMaskTests {
    /// Regions of the index tests, plus polygons with holes and parts on both sides of the antimeridian.
    static func regions(seed: UInt64, count: Int) -> [Region] {
        var out = SpatialIndexTests.conditions(seed: seed, count: count).map(\.region)
        let holed = try! Condition(geometry: .polygon(parts: [
            [ring([(10, 10), (10.2, 10), (10.2, 10.2), (10, 10.2)]), ring([(10.05, 10.05), (10.15, 10.05), (10.15, 10.15), (10.05, 10.15)])],
            [ring([(179.9, -5), (180, -5.1), (180, -4.9)])],
            [ring([(-180, -5.1), (-179.9, -5), (-180, -4.9)])],
        ]))
        out.append(holed.region)
        return out
    }

    static func ring(_ points: [(Double, Double)]) -> [Coordinate] {
        let ring = points.map { Coordinate(latitude: $0.1, longitude: $0.0) }
        return ring + [ring[0]]
    }

    /// Points to probe around a region: the corners of its inner box and just beyond them (where an
    /// index that rounds the box outward would answer wrongly), then its vertices and centre, moved by
    /// tiny and small amounts.
    static func probes(_ region: Region, _ rng: inout SplitMix64) -> [Coordinate] {
        var out: [Coordinate] = []
        if let inner = region.innerBox() {
            let width = inner.maxLongitude - inner.minLongitude, height = inner.maxLatitude - inner.minLatitude
            for (lat, north) in [(inner.minLatitude, -1.0), (inner.maxLatitude, 1)] {
                for (lon, east) in [(inner.minLongitude, -1.0), (inner.maxLongitude, 1)] {
                    for t in [0, 0.001, 0.003, 0.01, 0.03] {
                        out.append(Coordinate(latitude: lat + north * t * height, longitude: lon + east * t * width))
                    }
                }
            }
        }
        var anchors: [Coordinate] = []
        switch region {
        case .circle(let c):
            for bearing in stride(from: 0.0, to: 360, by: 15) {
                for factor in [0.0, 0.5, 0.999_999, 1.0, 1.000_001, 1.01] { anchors.append(offset(c.center, metres: c.radius * factor, bearing: bearing)) }
            }
        case .polygon(let p):
            anchors = p.coordinateParts.flatMap { $0.flatMap { $0 } }
        case .corridor(let c):
            anchors = [Coordinate(latitude: c.boundingBox.minLatitude, longitude: c.boundingBox.minLongitude)]
        }
        // An offset across a pole comes back with a latitude beyond ±90.
        for a in anchors where abs(a.latitude) <= 90 {
            out.append(Coordinate(latitude: a.latitude, longitude: wrapLongitude(a.longitude)))
            for scale in [1e-12, 1e-9, 1e-6, 1e-3, 1e-1] {
                let lat = a.latitude + Double.random(in: -scale...scale, using: &rng)
                let lon = wrapLongitude(a.longitude + Double.random(in: -scale...scale, using: &rng))
                if abs(lat) <= 90 { out.append(Coordinate(latitude: lat, longitude: lon)) }
            }
        }
        let box = region.boundingBox
        for _ in 0..<200 {
            let lat = Double.random(in: box.minLatitude...box.maxLatitude, using: &rng)
            let lon = wrapLongitude(Double.random(in: box.minLongitude...box.maxLongitude, using: &rng))
            out.append(Coordinate(latitude: lat, longitude: lon))
        }
        return out
    }

    @Test func masksAgreeWithTheExactTestAtEveryLevel() {
        var rng = SplitMix64(seed: 5)
        let index = SpatialIndex()
        var decided = 0, probed = 0
        for region in Self.regions(seed: 21, count: 300) {
            var masks: [SIMD2<UInt64>: CellMask] = [:]  // by level and cell: probes share cells
            for point in Self.probes(region, &rng) {
                let exact = region.contains(PreparedPoint(point))
                for level in 0..<SpatialIndex.levelCount {
                    let (key, bit, _, _) = index.locate(longitude: point.longitude, latitude: point.latitude, level: level)
                    let mask = masks[SIMD2(UInt64(level), key)] ?? region.mask(in: SpatialIndex.gridCell(key: key, level: level))
                    masks[SIMD2(UInt64(level), key)] = mask
                    probed += 1
                    if mask.inside & bit != 0 {
                        decided += 1
                        #expect(exact, "level \(level): \(point) is outside, but its sub-cell is marked covered")
                    } else if mask.boundary & bit == 0 {
                        decided += 1
                        #expect(!exact, "level \(level): \(point) is inside, but its sub-cell is marked outside")
                    }
                }
            }
        }
        // The masks must also decide, not only be safe: most probes sit near boundaries, where even a
        // perfect mask decides little, yet masks that decide nothing would fail this.
        #expect(decided * 5 > probed * 2)
    }

    /// Every point of a region's inner box is inside the region: its corners, its edges and within.
    @Test func innerBoxesLieInsideTheirRegions() {
        let regions = Self.regions(seed: 31, count: 3000)
        var rng = SplitMix64(seed: 13)
        var boxes = 0
        for region in regions {
            guard let box = region.innerBox() else { continue }
            boxes += 1
            #expect(box.minLongitude <= box.maxLongitude && box.minLatitude <= box.maxLatitude)
            var points: [Coordinate] = []
            for t in stride(from: 0.0, through: 1, by: 0.125) {
                let lon = box.minLongitude + t * (box.maxLongitude - box.minLongitude)
                let lat = box.minLatitude + t * (box.maxLatitude - box.minLatitude)
                points += [Coordinate(latitude: box.minLatitude, longitude: lon), Coordinate(latitude: box.maxLatitude, longitude: lon),
                           Coordinate(latitude: lat, longitude: box.minLongitude), Coordinate(latitude: lat, longitude: box.maxLongitude)]
            }
            for _ in 0..<20 {
                points.append(Coordinate(latitude: Double.random(in: box.minLatitude...box.maxLatitude, using: &rng),
                                         longitude: Double.random(in: box.minLongitude...box.maxLongitude, using: &rng)))
            }
            for point in points { #expect(region.contains(PreparedPoint(point)), "\(point) in \(region)") }
        }
        // Circles and star polygons nearly all have one: the test must not pass by finding none.
        #expect(boxes > regions.count / 2)
    }

    @Test func aConditionSetAnswersAsALinearScan() async {
        let regions = Self.regions(seed: 23, count: 1500)
        let set = ConditionSet(regions)
        var rng = SplitMix64(seed: 9)
        var hits = 0
        for region in regions.prefix(200) {
            for point in Self.probes(region, &rng).prefix(40) {
                let p = PreparedPoint(point)
                let scan = set.containingByLinearScan(p)
                #expect(set.containing(p) == scan, "\(point)")
                hits += scan.count
            }
        }
        #expect(hits > 1500)
        await propertyCheck(count: 1000, input: Gen.double(in: -90...90), Gen.double(in: -180...180)) { lat, lon in
            let p = PreparedPoint(Coordinate(latitude: lat, longitude: lon))
            #expect(set.containing(p) == set.containingByLinearScan(p))
        }
    }

    @Test func regionsAddedOneByOneAnswerTheSame() {
        let regions = Self.regions(seed: 29, count: 700)
        var grown = ConditionSet()
        for r in regions { grown.append(r) }
        let built = ConditionSet(regions)
        var rng = SplitMix64(seed: 3)
        for region in regions.prefix(150) {
            for point in Self.probes(region, &rng).prefix(40) {
                let p = PreparedPoint(point)
                #expect(grown.containing(p) == built.containing(p))
            }
        }
    }
}
