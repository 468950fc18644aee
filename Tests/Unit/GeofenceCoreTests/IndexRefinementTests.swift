import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import GeofenceCore

/// A restore builds the index from the regions' boxes alone and adds their octagons and masks later,
/// off the path to the first fix. Before, after and across that, every answer must be the same.
@Suite(.offTheCooperativePool(.computing)) struct IndexRefinementTests {
    let conditions = SpatialIndexTests.conditions(seed: 31, count: 3000)

    /// The index built whole, and one built from boxes, each choosing its floor (the monitor's test below
    /// hands it a saved one).
    func indexes() -> (whole: SpatialIndex, coarse: SpatialIndex) {
        let regions = conditions.enumerated().map { ($0.offset, $0.element.region) }
        var whole = SpatialIndex()
        whole.insertAll(regions: regions)
        var coarse = SpatialIndex()
        coarse.insertAll(regions: regions, refineLater: true)
        #expect(coarse.floorLevel == whole.floorLevel)
        return (whole, coarse)
    }

    /// Every candidate with whether the index is sure of it, as the monitor reads them.
    func answers(_ index: SpatialIndex, _ lat: Double, _ lon: Double) -> [String] {
        var out: [String] = []
        index.forEachCandidate(longitude: lon, latitude: lat) { slot, sure in out.append("\(slot) \(sure)") }
        return out.sorted()
    }

    /// The conditions that hold a point, through the index: the candidates it is sure of, and the others
    /// that the exact test accepts. Nothing the index is sure of may be outside.
    func holders(_ index: SpatialIndex, _ point: Coordinate) -> [Int] {
        let prepared = PreparedPoint(point)
        var found: [Int] = []
        index.forEachCandidate(longitude: point.longitude, latitude: point.latitude) { slot, sure in
            let inside = conditions[slot].region.contains(prepared)
            #expect(!sure || inside, "slot \(slot) is surely inside but is not")
            if inside { found.append(slot) }
        }
        return found.sorted()
    }

    func scan(_ point: Coordinate) -> [Int] {
        let prepared = PreparedPoint(point)
        return conditions.indices.filter { conditions[$0].region.contains(prepared) }
    }

    /// Points at every condition's centre, where random points rarely land.
    var centres: [Coordinate] {
        conditions.map { c in
            let b = c.region.boundingBox
            return Coordinate(
                latitude: (b.minLatitude + b.maxLatitude) / 2,
                longitude: wrappedLongitudeDelta((b.minLongitude + b.maxLongitude) / 2))
        }
    }

    @Test func anIndexOfBoxesFindsWhatAScanFinds() async {
        let (_, coarse) = indexes()
        #expect(coarse.needsRefinement)
        await propertyCheck(count: 3000, input: Gen.double(in: -90...90), Gen.double(in: -180...180)) { lat, lon in
            let point = Coordinate(latitude: lat, longitude: lon)
            #expect(holders(coarse, point) == scan(point))
        }
        var held = 0
        for point in centres {
            let found = holders(coarse, point)
            #expect(found == scan(point))
            held += found.count
        }
        #expect(held > 1000)
    }

    @Test func anAdoptedRefinementAnswersAsTheIndexBuiltWhole() async throws {
        let (whole, built) = indexes()
        var coarse = built
        let refinement = try #require(coarse.refinement())
        let adopted = coarse.adopt(refinement)
        #expect(adopted && !coarse.needsRefinement && coarse.refinement() == nil)
        let again = coarse.adopt(refinement)
        #expect(!again, "a refinement is adopted once")
        let frozen = (whole, coarse)
        await propertyCheck(count: 3000, input: Gen.double(in: -90...90), Gen.double(in: -180...180)) { lat, lon in
            #expect(answers(frozen.1, lat, lon) == answers(frozen.0, lat, lon))
        }
        for point in centres {
            #expect(answers(coarse, point.latitude, point.longitude) == answers(whole, point.latitude, point.longitude))
        }
        // An index built whole needs none.
        #expect(!whole.needsRefinement && whole.refinement() == nil)
    }

    @Test func aRefinementWorkedOutBeforeAChangeIsRefused() throws {
        var coarse = indexes().coarse
        let stale = try #require(coarse.refinement())
        coarse.remove(slot: 5)
        let adoptedStale = coarse.adopt(stale)
        #expect(!adoptedStale && coarse.needsRefinement)
        let fresh = try #require(coarse.refinement())
        let adoptedFresh = coarse.adopt(fresh)
        #expect(adoptedFresh)
        for (k, point) in centres.enumerated() where k != 5 {
            #expect(holders(coarse, point) == scan(point).filter { $0 != 5 })
        }
    }

    /// Through the monitor: a restore that refines later, with the refinement adopted halfway through a
    /// drive, gives exactly the events of a restore that refines at once.
    @Test func theEventsAreTheSameBeforeAndAfterTheRefinement() throws {
        var rng = SplitMix64(seed: 13)
        let origin = Coordinate(latitude: 47.5, longitude: 6)
        var records: [(identifier: String, record: MonitorRecord)] = []
        for k in 0..<2_000 {
            let centre = scattered(around: origin, within: 50_000, &rng)
            let radius = Double.random(in: 20...3_000, using: &rng)
            let condition =
                k.isMultiple(of: 2)
                ? try Condition.circle(center: centre, radius: radius)
                : try Condition(
                    geometry: .polygon(parts: [
                        [(0...6).map { offset(centre, metres: radius, bearing: Double($0 % 6) * 60) }]
                    ]))
            records.append(("c\(k)", MonitorRecord(condition: condition)))
        }
        let fixes = (0..<300).map { _ in scattered(around: origin, within: 50_000, &rng) }
        func events(refineAfter: Int?) -> [String] {
            var engine = MonitorEngine(name: "m", configuration: .eachFixAlone)
            engine.restore(contentsOf: records, indexFloor: 2, refineIndexLater: refineAfter != nil)
            var out: [String] = []
            for (k, p) in fixes.enumerated() {
                if k == refineAfter, let work = engine.indexRefinementWork(), let refinement = work() {
                    let adopted = engine.adoptIndexRefinement(refinement)
                    #expect(adopted)
                }
                // Far apart in time, so that no fix is refused for speed.
                for e in engine.process(fix(p.latitude, p.longitude, t: Double(k) * 10_000)).events {
                    out.append("\(k) \(e.identifier) \(e.kind)")
                }
            }
            #expect(!engine.indexNeedsRefinement || refineAfter == fixes.count)
            return out
        }
        let reference = events(refineAfter: nil)
        #expect(reference.count > 100)
        for refineAfter in [0, 150, fixes.count] {
            #expect(events(refineAfter: refineAfter) == reference, "refined after \(refineAfter) fixes")
        }
    }
}
