import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import GeofenceCore

/// A cell mask may only say what the exact test would say: a covered sub-cell holds no point outside
/// the region, and a sub-cell in neither set holds no point inside it.
@Suite(.offTheCooperativePool(.computing)) struct CellMaskTests {
    /// Regions of the index tests, plus polygons with holes and parts on both sides of the antimeridian.
    static func regions(seed: UInt64, count: Int) -> [Region] {
        var out = SpatialIndexTests.conditions(seed: seed, count: count).map(\.region)
        let holed = try! Condition(
            geometry: .polygon(parts: [
                [
                    ring([(10, 10), (10.2, 10), (10.2, 10.2), (10, 10.2)]),
                    ring([(10.05, 10.05), (10.15, 10.05), (10.15, 10.15), (10.05, 10.15)]),
                ],
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

    /// Points to probe around a region: the vertices of its inner octagon and just beyond them (where
    /// an index that rounds it outward would answer wrongly), points of its boundary found by bisection
    /// (where an outer octagon rounded inward would), then its vertices and centre, moved by tiny and
    /// small amounts.
    static func probes(_ region: Region, _ rng: inout SplitMix64) -> [Coordinate] {
        var out: [Coordinate] = []
        if let inner = region.innerOctagon() {
            let corners = vertices(of: inner)
            let centre = corners.reduce(SIMD2<Double>(0, 0), +) / Double(corners.count)
            for (k, corner) in corners.enumerated() {
                let next = corners[(k + 1) % corners.count]
                for point in [corner, (corner + next) / 2] {
                    for t in [0, 0.001, 0.003, 0.01, 0.03] {
                        let p = point + (point - centre) * t
                        out.append(Coordinate(latitude: p.y, longitude: wrapLongitude(p.x)))
                    }
                }
            }
        }
        out += boundaryPoints(region)
        var anchors: [Coordinate] = []
        switch region {
        case .circle(let c):
            for bearing in stride(from: 0.0, to: 360, by: 15) {
                for factor in [0.0, 0.5, 0.999_999, 1.0, 1.000_001, 1.01] {
                    anchors.append(offset(c.center, metres: c.radius * factor, bearing: bearing))
                }
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
        var decided = 0
        var probed = 0
        for region in Self.regions(seed: 21, count: 300) {
            var masks: [SIMD2<UInt64>: CellMask] = [:]  // by level and cell: probes share cells
            for point in Self.probes(region, &rng) {
                let exact = region.contains(PreparedPoint(point))
                for level in 0..<SpatialIndex.levelCount {
                    let (key, bit, _, _) = index.locate(
                        longitude: point.longitude, latitude: point.latitude, level: level)
                    let mask =
                        masks[SIMD2(UInt64(level), key)]
                        ?? region.mask(in: SpatialIndex.gridCell(key: key, level: level))
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

    /// A convex octagon's vertices, counter-clockwise: its box clipped by its diagonal bounds.
    static func vertices(of o: Octagon) -> [SIMD2<Double>] {
        var polygon = [
            SIMD2(o.box.minLongitude, o.box.minLatitude), SIMD2(o.box.maxLongitude, o.box.minLatitude),
            SIMD2(o.box.maxLongitude, o.box.maxLatitude), SIMD2(o.box.minLongitude, o.box.maxLatitude),
        ]
        // Each cut as n·p <= c.
        let cuts: [(SIMD2<Double>, Double)] = [
            (SIMD2(1, 1), o.sum.upperBound), (SIMD2(-1, -1), -o.sum.lowerBound),
            (SIMD2(1, -1), o.difference.upperBound), (SIMD2(-1, 1), -o.difference.lowerBound),
        ]
        for (n, c) in cuts where c.isFinite {
            var clipped: [SIMD2<Double>] = []
            for (k, p) in polygon.enumerated() {
                let q = polygon[(k + 1) % polygon.count]
                let fp = (n * p).sum() - c
                let fq = (n * q).sum() - c
                if fp <= 0 { clipped.append(p) }
                if (fp < 0) != (fq < 0), fp != 0, fq != 0 { clipped.append(p + (q - p) * (fp / (fp - fq))) }
            }
            polygon = clipped
        }
        return polygon
    }

    /// The last point inside the region along each of 36 bearings from its centre, found by bisection
    /// with the exact test, and a point just beyond it.
    static func boundaryPoints(_ region: Region) -> [Coordinate] {
        let box = region.boundingBox
        guard box.maxLongitude - box.minLongitude < 90 else { return [] }
        let centre: Coordinate
        switch region {
        case .circle(let c): centre = c.center
        default:
            centre = Coordinate(
                latitude: (box.minLatitude + box.maxLatitude) / 2,
                longitude: wrapLongitude((box.minLongitude + box.maxLongitude) / 2))
        }
        guard region.contains(PreparedPoint(centre)) else { return [] }
        let reach = max(box.maxLongitude - box.minLongitude, box.maxLatitude - box.minLatitude)
        var out: [Coordinate] = []
        for k in 0..<36 {
            let angle = Double(k) * 10 * .pi / 180
            func point(_ t: Double) -> Coordinate {
                Coordinate(
                    latitude: min(max(centre.latitude + t * reach * sin(angle), -90), 90),
                    longitude: wrapLongitude(centre.longitude + t * reach * cos(angle)))
            }
            var low = 0.0
            var high = 1.0
            for _ in 0..<40 {
                let middle = (low + high) / 2
                if region.contains(PreparedPoint(point(middle))) { low = middle } else { high = middle }
            }
            out += [point(low), point(high)]
        }
        return out
    }

    /// Every point of a region's inner octagon is inside the region: its vertices, its sides and within.
    @Test func innerOctagonsLieInsideTheirRegions() {
        let regions = Self.regions(seed: 31, count: 3000)
        var rng = SplitMix64(seed: 13)
        var found = 0
        var cut = 0
        for region in regions {
            guard let inner = region.innerOctagon() else { continue }
            found += 1
            if inner.sum.upperBound.isFinite { cut += 1 }
            let corners = Self.vertices(of: inner)
            #expect(corners.count >= 4, "\(inner)")
            var points: [SIMD2<Double>] = []
            for (k, corner) in corners.enumerated() {
                let next = corners[(k + 1) % corners.count]
                for t in stride(from: 0.0, to: 1, by: 0.125) { points.append(corner + (next - corner) * t) }
            }
            for _ in 0..<20 {
                let p = SIMD2(
                    Double.random(in: inner.box.minLongitude...inner.box.maxLongitude, using: &rng),
                    Double.random(in: inner.box.minLatitude...inner.box.maxLatitude, using: &rng))
                if inner.sum.contains(p.x + p.y), inner.difference.contains(p.x - p.y) { points.append(p) }
            }
            for p in points {
                let point = Coordinate(latitude: p.y, longitude: wrapLongitude(p.x))
                #expect(region.contains(PreparedPoint(point)), "\(point) in \(region)")
            }
        }
        // Circles and star polygons nearly all have one, most with cut corners: the test must not pass by
        // finding none.
        #expect(found > regions.count / 2)
        #expect(cut > found / 2)
    }

    /// Every point of a region lies within its box and its outer diagonal bounds, up to its boundary.
    @Test func outerDiagonalsHoldTheirRegions() {
        let regions = Self.regions(seed: 37, count: 1000)
        var bounded = 0
        for region in regions {
            guard let (sum, difference) = region.outerDiagonals() else { continue }
            bounded += 1
            let box = region.boundingBox
            var points = Self.boundaryPoints(region)
            if case .polygon(let p) = region { points += p.coordinateParts.flatMap { $0.flatMap { $0 } } }
            for point in points where region.contains(PreparedPoint(point)) {
                guard let x = box.unwrappedLongitude(point.longitude) else {
                    Issue.record("\(point) is outside the box of \(region)")
                    continue
                }
                #expect(
                    sum.contains(x + point.latitude) && difference.contains(x - point.latitude), "\(point) in \(region)"
                )
            }
        }
        #expect(bounded > regions.count / 2)
    }

    /// The per-fix, branch-free test of an entry's octagon answers as its definition, at every step of a
    /// cell, for random octagons, an empty one and a full one.
    @Test func theBranchFreeOctagonTestMatchesItsDefinition() {
        var rng = SplitMix64(seed: 41)
        func bounds() -> (UInt8, UInt8) {
            let low = UInt8.random(in: 0...255, using: &rng)
            return (low, UInt8.random(in: low...255, using: &rng))
        }
        var octagons = [StepOctagon.empty, StepOctagon(minU: 0, minV: 0, maxU: 255, maxV: 255)]
        for _ in 0..<30 {
            let (u0, u1) = bounds()
            let (v0, v1) = bounds()
            var o = StepOctagon(minU: u0, minV: v0, maxU: u1, maxV: v1)
            (o.sumLow, o.sumHigh) = bounds()
            (o.differenceLow, o.differenceHigh) = bounds()
            octagons.append(o)
        }
        var held = 0
        for o in octagons {
            var mismatches = 0
            for u in UInt8.min...UInt8.max {
                for v in UInt8.min...UInt8.max {
                    let (s, d) = StepOctagon.diagonals(u: u, v: v)
                    let expected = o.holds(u: u, v: v, sum: s, difference: d)
                    if o.holds(StepOctagon.probe(u: u, v: v, sum: s, difference: d)) != expected { mismatches += 1 }
                    if expected { held += 1 }
                }
            }
            #expect(mismatches == 0, "\(o)")
        }
        #expect(held > 65_536, "the full octagon holds every step, and some random ones hold some")
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
