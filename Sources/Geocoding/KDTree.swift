import Foundation
import GeofenceCore

/// Nearest-place search over points stored as an implicit k-d tree: the builder put the median of every
/// range at the range's middle, split by x, y and z in turn, so the tree needs no nodes of its own.
/// Points are ECEF positions on the ellipsoid in metres, so the nearest by chord is the nearest along the
/// ellipsoid but for ties within millimetres at tens of kilometres.
struct KDTree: Sendable {
    let x: [Double], y: [Double], z: [Double]

    init(latitudeMicro: [Int32], longitudeMicro: [Int32]) {
        let n = latitudeMicro.count
        var x = [Double](repeating: 0, count: n), y = x, z = x
        for i in 0..<n {
            let p = PreparedPoint(Coordinate(latitude: Double(latitudeMicro[i]) / 1e6, longitude: Double(longitudeMicro[i]) / 1e6)).earthCentred
            x[i] = p.x; y[i] = p.y; z[i] = p.z
        }
        self.x = x; self.y = y; self.z = z
    }

    /// The point nearest to `q` that `accept` allows, and its squared chord; nil when it allows none.
    func nearest(to q: SIMD3<Double>, where accept: (Int) -> Bool) -> (index: Int, chordSquared: Double)? {
        var best = (index: -1, chordSquared: Double.infinity)
        x.withUnsafeBufferPointer { xs in
            y.withUnsafeBufferPointer { ys in
                z.withUnsafeBufferPointer { zs in
                    search(0, xs.count, 0, q, xs, ys, zs, accept, &best)
                }
            }
        }
        return best.index < 0 ? nil : best
    }

    private func search(_ lo: Int, _ hi: Int, _ depth: Int, _ q: SIMD3<Double>, _ xs: UnsafeBufferPointer<Double>,
                        _ ys: UnsafeBufferPointer<Double>, _ zs: UnsafeBufferPointer<Double>, _ accept: (Int) -> Bool,
                        _ best: inout (index: Int, chordSquared: Double)) {
        guard lo < hi else { return }
        let mid = (lo + hi) >> 1
        let dx = q.x - xs[mid], dy = q.y - ys[mid], dz = q.z - zs[mid]
        let d = dx * dx + dy * dy + dz * dz
        if d < best.chordSquared, accept(mid) { best = (mid, d) }
        let diff = depth % 3 == 0 ? dx : depth % 3 == 1 ? dy : dz
        // The side the query is on first; the other only if the splitting plane is nearer than the best.
        if diff < 0 {
            search(lo, mid, depth + 1, q, xs, ys, zs, accept, &best)
            if diff * diff < best.chordSquared { search(mid + 1, hi, depth + 1, q, xs, ys, zs, accept, &best) }
        } else {
            search(mid + 1, hi, depth + 1, q, xs, ys, zs, accept, &best)
            if diff * diff < best.chordSquared { search(lo, mid, depth + 1, q, xs, ys, zs, accept, &best) }
        }
    }
}
