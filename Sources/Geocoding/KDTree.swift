import Foundation
import GeofenceCore

/// Nearest-place search over points stored as an implicit k-d tree: the builder put the median of every
/// range at the range's middle, split by x, y and z in turn, so the tree needs no nodes of its own.
/// Points are ECEF positions on the ellipsoid, so the nearest by chord is the nearest along the ellipsoid
/// but for ties within millimetres at tens of kilometres. They are held in whole centimetres (Int32 holds
/// ±21,000 km), as the builder computed and ordered them, so the tree's order holds exactly.
struct KDTree: Sendable {
    /// Each point's x, y and z side by side, in centimetres.
    let xyz: GazetteerTable<Int32>
    /// Ranges this small are scanned rather than split further: cheaper than the recursion's bookkeeping.
    static let bucketSize = 16

    var count: Int { xyz.count / 3 }

    /// A tree over positions the builder ordered (x, y, z of each point in turn, in centimetres).
    init(centimetres: GazetteerTable<Int32>) {
        xyz = centimetres
    }

    /// The point's squared chord to `q` (ECEF metres), in square centimetres.
    func chordSquared(_ i: Int, _ q: SIMD3<Double>) -> Double {
        let c = q * 100
        let dx = c.x - Double(xyz[3 * i])
        let dy = c.y - Double(xyz[3 * i + 1])
        let dz = c.z - Double(xyz[3 * i + 2])
        return dx * dx + dy * dy + dz * dz
    }

    /// The point nearest to `q` (ECEF metres), and its squared chord in square centimetres; nil when the
    /// tree is empty.
    func nearest(to q: SIMD3<Double>) -> (index: Int, chordSquared: Double)? {
        nearest(to: q, where: EveryPoint())
    }

    /// The point nearest to `q` that `filter` accepts, and its squared chord (cm²); nil when it accepts none.
    func nearest(to q: SIMD3<Double>, where filter: some PointFilter) -> (index: Int, chordSquared: Double)? {
        var best = (index: -1, chordSquared: Double.infinity)
        xyz.withUnsafeBufferPointer { points in
            Self.search(0, points.count / 3, axis: 0, q * 100, points, filter, &best)
        }
        return best.index < 0 ? nil : best
    }

    private static func search(
        _ lo: Int, _ hi: Int, axis: Int, _ q: SIMD3<Double>, _ points: UnsafeBufferPointer<Int32>,
        _ filter: some PointFilter, _ best: inout (index: Int, chordSquared: Double)
    ) {
        if hi - lo <= bucketSize {
            for i in lo..<hi {
                let dx = q.x - Double(points[3 * i])
                let dy = q.y - Double(points[3 * i + 1])
                let dz = q.z - Double(points[3 * i + 2])
                let d = dx * dx + dy * dy + dz * dz
                if Self.improves(i, d, best), filter.accepts(i) { best = (i, d) }
            }
            if best.index >= 0 { filter.scannedLeaf(best: best.index) }
            return
        }
        let mid = (lo + hi) >> 1
        let dx = q.x - Double(points[3 * mid])
        let dy = q.y - Double(points[3 * mid + 1])
        let dz = q.z - Double(points[3 * mid + 2])
        let d = dx * dx + dy * dy + dz * dz
        if Self.improves(mid, d, best), filter.accepts(mid) { best = (mid, d) }
        let diff = axis == 0 ? dx : axis == 1 ? dy : dz
        let next = axis == 2 ? 0 : axis + 1
        // The side the query is on first; the other only if the splitting plane is no farther than the best.
        if diff < 0 {
            search(lo, mid, axis: next, q, points, filter, &best)
            if diff * diff <= best.chordSquared { search(mid + 1, hi, axis: next, q, points, filter, &best) }
        } else {
            search(mid + 1, hi, axis: next, q, points, filter, &best)
            if diff * diff <= best.chordSquared { search(lo, mid, axis: next, q, points, filter, &best) }
        }
    }
}

extension KDTree {
    /// Whether a point at `d` beats the best so far: nearer, or as near with a lower index, so that places
    /// at one position (GeoNames has some) answer the same whichever way the search went.
    @inline(__always)
    static func improves(_ i: Int, _ d: Double, _ best: (index: Int, chordSquared: Double)) -> Bool {
        d < best.chordSquared || (d == best.chordSquared && i < best.index)
    }
}

/// Which points a nearest search may answer with; a type rather than a closure, so that each search is
/// specialized for its filter.
protocol PointFilter {
    func accepts(_ point: Int) -> Bool
    /// Called after each range the search scans, with the best point so far: often the answer already,
    /// so a caller can start fetching what it will read of it.
    func scannedLeaf(best: Int)
}

extension PointFilter {
    @inline(__always) func scannedLeaf(best: Int) {}
}

struct EveryPoint: PointFilter {
    @inline(__always) func accepts(_ point: Int) -> Bool { true }
}
