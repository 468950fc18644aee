import Foundation
import PropertyBased
import Synchronization
import TestSupport
import Testing

@testable import GeofenceCore

@Suite(.offTheCooperativePool(.computing)) struct SpatialIndexTests {
    /// Random conditions of many sizes, some across the antimeridian or near a pole.
    static func conditions(seed: UInt64, count: Int) -> [Condition] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let lat = Double.random(in: -89...89, using: &rng)
            let lon =
                Bool.random(using: &rng)
                ? Double.random(in: 179...180, using: &rng) : Double.random(in: -180...180, using: &rng)
            let size = exp(Double.random(in: log(20)...log(2_000_000), using: &rng))
            let center = Coordinate(latitude: lat, longitude: lon)
            if Bool.random(using: &rng) {
                return try! Condition(geometry: .circle(center: center, radius: size))
            }
            let n = Int.random(in: 3...12, using: &rng)
            let deg = min(size / 111_000, 20)
            var ring = (0..<n).map { k -> Coordinate in
                let a = Double(k) / Double(n) * 2 * .pi
                let r = deg * Double.random(in: 0.5...1, using: &rng)
                return Coordinate(
                    latitude: max(min(lat + r * sin(a) * 0.5, 90), -90),
                    longitude: wrappedLongitudeDelta(lon + r * cos(a)))
            }
            ring.append(ring[0])
            return (try? Condition(geometry: .polygon(parts: [[ring]])))
                ?? (try! Condition(geometry: .circle(center: center, radius: size)))
        }
    }

    @Test func pointQueriesFindExactlyWhatALinearScanFinds() async {
        let conditions = Self.conditions(seed: 7, count: 3000)
        var index = SpatialIndex()
        for (i, c) in conditions.enumerated() { index.insert(slot: i, box: c.region.boundingBox) }
        #expect(index.count == 3000)
        let frozen = index
        await propertyCheck(count: 3000, input: Gen.double(in: -90...90), Gen.double(in: -180...180)) { lat, lon in
            let point = PreparedPoint(Coordinate(latitude: lat, longitude: lon))
            var viaIndex: [Int] = []
            frozen.forEachCandidate(longitude: lon, latitude: lat) {
                if conditions[$0].region.contains(point) { viaIndex.append($0) }
            }
            let viaScan = conditions.indices.filter { conditions[$0].region.contains(point) }
            #expect(viaIndex.sorted() == viaScan)
        }
    }

    @Test func pointsNearConditionsAreFoundToo() {
        // Random points rarely land inside small conditions; probe right at each one's centre and edge.
        let conditions = Self.conditions(seed: 11, count: 2000)
        var index = SpatialIndex()
        for (i, c) in conditions.enumerated() { index.insert(slot: i, box: c.region.boundingBox) }
        var hits = 0
        for c in conditions {
            guard case .circle(let circle) = c.region else { continue }
            for factor in [0.0, 0.99] {
                let q = offset(circle.center, metres: circle.radius * factor, bearing: 73)
                guard q.isValid, abs(q.longitude) <= 180 else { continue }
                let point = PreparedPoint(q)
                var viaIndex: [Int] = []
                index.forEachCandidate(longitude: q.longitude, latitude: q.latitude) {
                    if conditions[$0].region.contains(point) { viaIndex.append($0) }
                }
                let viaScan = conditions.indices.filter { conditions[$0].region.contains(point) }
                #expect(viaIndex.sorted() == viaScan)
                hits += viaScan.count
            }
        }
        #expect(hits > 1000)
    }

    /// A restore works out the slots' masks on every core: the index answers as one built slot by slot.
    @Test func regionsAddedAtOnceAnswerAsRegionsAddedOneByOne() async {
        let conditions = Self.conditions(seed: 23, count: 3000)
        var atOnce = SpatialIndex()
        atOnce.insertAll(regions: conditions.enumerated().map { ($0.offset, $0.element.region) })
        var oneByOne = SpatialIndex()
        for (i, c) in conditions.enumerated() { oneByOne.insert(slot: i, region: c.region) }
        let frozen = (atOnce, oneByOne)
        func answers(_ index: SpatialIndex, _ lat: Double, _ lon: Double) -> [String] {
            var out: [String] = []
            index.forEachCandidate(longitude: lon, latitude: lat) { slot, sure in out.append("\(slot) \(sure)") }
            return out.sorted()
        }
        await propertyCheck(count: 3000, input: Gen.double(in: -90...90), Gen.double(in: -180...180)) { lat, lon in
            #expect(answers(frozen.0, lat, lon) == answers(frozen.1, lat, lon))
        }
        // At the conditions themselves too, where random points rarely land.
        for c in conditions {
            let p = c.region.boundingBox
            let lat = (p.minLatitude + p.maxLatitude) / 2
            let lon = (p.minLongitude + p.maxLongitude) / 2
            #expect(answers(frozen.0, lat, lon) == answers(frozen.1, lat, lon))
        }
    }

    @Test func removalAndReplacement() {
        var index = SpatialIndex()
        let box = BoundingBox(minLongitude: 1, minLatitude: 1, maxLongitude: 1.001, maxLatitude: 1.001)
        index.insert(slot: 0, box: box)
        index.insert(slot: 1, box: box)
        index.remove(slot: 0)
        var found: [Int] = []
        index.forEachCandidate(longitude: 1.0005, latitude: 1.0005) { found.append($0) }
        #expect(found == [1])
        index.insert(
            slot: 1, box: BoundingBox(minLongitude: 2, minLatitude: 2, maxLongitude: 2.001, maxLatitude: 2.001))
        found = []
        index.forEachCandidate(longitude: 1.0005, latitude: 1.0005) { found.append($0) }
        #expect(found.isEmpty)
        #expect(index.count == 1)
    }

    @Test func segmentQueriesFindEveryBoxTheSegmentMeets() async {
        let conditions = Self.conditions(seed: 13, count: 3000)
        var index = SpatialIndex()
        for (i, c) in conditions.enumerated() { index.insert(slot: i, box: c.region.boundingBox) }
        await propertyCheck(
            count: 150, input: Gen.double(in: -89...89), Gen.double(in: -180...180), Gen.double(in: -0.05...0.05),
            Gen.double(in: -0.05...0.05)
        ) { lat, lon, dLat, dLon in
            let a = Coordinate(latitude: lat, longitude: lon)
            let b = Coordinate(latitude: lat + dLat, longitude: wrappedLongitudeDelta(lon + dLon))
            var found = Set<Int>()
            var copy = index
            copy.forEachCandidate(alongSegmentFrom: a, to: b) { found.insert($0) }
            // Sample the segment densely: every box holding a sample point must have been offered.
            let near = conditions.indices.filter {
                conditions[$0].region.boundingBox.intersects(
                    BoundingBox(
                        minLongitude: lon - 0.06, minLatitude: lat - 0.06, maxLongitude: lon + 0.06,
                        maxLatitude: lat + 0.06))
            }
            for k in 0...100 {
                let t = Double(k) / 100
                let q = (lat + t * dLat, wrappedLongitudeDelta(lon + t * dLon))
                for i in near where conditions[i].region.boundingBox.contains(longitude: q.1, latitude: q.0) {
                    #expect(found.contains(i))
                }
            }
        }
    }

    /// With regions inserted, cell masks drop segments that stay in sub-cells a region does not reach; a
    /// region the segment really meets must still be offered. Segments pass near boundaries, at every scale.
    @Test func segmentQueriesThroughMasksFindEveryRegionTheSegmentMeets() async {
        let conditions = Self.conditions(seed: 17, count: 3000)
        var index = SpatialIndex()
        for (i, c) in conditions.enumerated() { index.insert(slot: i, region: c.region) }
        var meetings = 0
        await propertyCheck(
            count: 400, input: Gen.int(in: 0...2999), Gen.double(in: 0...360), Gen.double(in: 0...1),
            Gen.double(in: -1...1)
        ) { which, bearing, scale, shift in
            // A point on or near the chosen condition's boundary, and a segment through it.
            let near: Coordinate
            switch conditions[which].region {
            case .circle(let c): near = offset(c.center, metres: c.radius * (1 + shift * 0.01), bearing: bearing)
            case .polygon(let g):
                // A point along one of its edges, or just beside it.
                let k = 1 + Int(scale * 1e6) % (g.vertices.count - 1)
                let t = (shift + 1) / 2
                let v = g.vertices[k - 1] + t * (g.vertices[k] - g.vertices[k - 1])
                near = Coordinate(latitude: v.y, longitude: wrappedLongitudeDelta(v.x))
            case .corridor: return
            }
            let length = exp(log(1.0) + scale * (log(5_000.0) - log(1.0)))
            let a = offset(near, metres: length / 2, bearing: bearing + 90)
            let b = offset(near, metres: length / 2, bearing: bearing + 270)
            guard a.isValid, b.isValid, abs(a.latitude) < 89, abs(b.latitude) < 89 else { return }
            var found = Set<Int>()
            var copy = index
            copy.forEachCandidate(alongSegmentFrom: a, to: b) { found.insert($0) }
            for i in conditions.indices where conditions[i].region.intersectsSegment(from: a, to: b) {
                meetings += 1
                #expect(found.contains(i), "condition \(i) meets \(a) to \(b) but was not offered")
            }
        }
        #expect(meetings > 200)
    }
}

/// A restore may hand the index its saved floor; whatever the floor, the answers are the same.
@Suite(.offTheCooperativePool(.computing)) struct IndexFloorHintTests {
    @Test func everyFloorGivesTheSameEvents() {
        var rng = SplitMix64(seed: 11)
        let origin = Coordinate(latitude: 47.5, longitude: 6)
        var records: [(identifier: String, record: MonitorRecord)] = []
        for k in 0..<2_000 {
            let c = scattered(around: origin, within: 50_000, &rng)
            let condition = try! Condition.circle(center: c, radius: Double.random(in: 20...3_000, using: &rng))
            records.append(("c\(k)", MonitorRecord(condition: condition)))
        }
        let fixes = (0..<300).map { _ in scattered(around: origin, within: 50_000, &rng) }
        func events(floor: Int?) -> [String] {
            var engine = MonitorEngine(name: "m", configuration: .eachFixAlone)
            engine.restore(contentsOf: records, indexFloor: floor)
            var out: [String] = []
            for (k, p) in fixes.enumerated() {
                // Far apart in time, so that no fix is refused for speed.
                for e in engine.process(fix(p.latitude, p.longitude, t: Double(k) * 10_000)).events {
                    out.append("\(k) \(e.identifier) \(e.kind)")
                }
            }
            return out.sorted()
        }
        let reference = events(floor: nil)
        #expect(reference.count > 100)
        for floor in 0..<SpatialIndex.levelCount { #expect(events(floor: floor) == reference, "floor \(floor)") }
    }
}
