import Foundation

/// A convex lon/lat region: a box whose corners may be cut by lines of constant lon + lat and of
/// constant lon − lat. It hugs a circle or a round polygon far more closely than a box does (a
/// circle's inscribed square leaves 36% of it out, an inscribed octagon under 20%), and a cell entry
/// tests it in its own steps with byte compares.
struct Octagon: Sendable, Equatable {
    var box: BoundingBox
    /// Bounds on lon + lat, in degrees; infinite where no corner is cut.
    var sum: ClosedRange<Double>
    /// Bounds on lon − lat, in degrees; infinite where no corner is cut.
    var difference: ClosedRange<Double>

    init(
        box: BoundingBox, sum: ClosedRange<Double> = -.infinity ... .infinity,
        difference: ClosedRange<Double> = -.infinity ... .infinity
    ) {
        self.box = box
        self.sum = sum
        self.difference = difference
    }

    /// The octagon whose eight vertices lie on the ellipse centred at (`x`, `y`) with semi-axes `a`
    /// (east) and `b` (north), in degrees, with those vertices.
    ///
    /// In the ellipse's unit-circle frame a cut along lon + lat has its normal at θ = atan2(b, a); the
    /// vertices on either side of that cut sit at θ ∓ δ, which keeps the octagon symmetric and large.
    static func inscribed(x: Double, y: Double, a: Double, b: Double) -> (octagon: Octagon, vertices: [SIMD2<Double>]) {
        let theta = atan2(b, a)
        let delta = min(theta, .pi / 2 - theta) / 2
        let beta = theta - delta
        let gamma = theta + delta
        let east = a * cos(beta)
        let north = b * sin(gamma)
        let cut = a * cos(beta) + b * sin(beta)
        let octagon = Octagon(
            box: BoundingBox(
                minLongitude: x - east, minLatitude: y - north, maxLongitude: x + east, maxLatitude: y + north),
            sum: (x + y - cut)...(x + y + cut), difference: (x - y - cut)...(x - y + cut))
        var vertices: [SIMD2<Double>] = []
        for angle in [beta, gamma] {
            let dx = a * cos(angle)
            let dy = b * sin(angle)
            for (sx, sy) in [(1.0, 1.0), (-1, 1), (-1, -1), (1, -1)] {
                vertices.append(SIMD2(x + sx * dx, y + sy * dy))
            }
        }
        return (octagon, vertices)
    }

    /// The area in square degrees: the box less the corner triangles the cuts take off.
    var area: Double {
        let width = box.maxLongitude - box.minLongitude
        let height = box.maxLatitude - box.minLatitude
        let cuts = [
            box.maxLongitude + box.maxLatitude - sum.upperBound, sum.lowerBound - box.minLongitude - box.minLatitude,
            box.maxLongitude - box.minLatitude - difference.upperBound,
            difference.lowerBound - box.minLongitude + box.maxLatitude,
        ]
        let lost = cuts.reduce(0.0) { total, cut in
            let depth = min(max(cut, 0), min(width, height))
            return total + depth * depth / 2
        }
        return max(width * height - lost, 0)
    }

    /// The octagon scaled by `t` about the point (`x`, `y`).
    func scaled(by t: Double, aboutX x: Double, y: Double) -> Octagon {
        Octagon(
            box: BoundingBox(
                minLongitude: x + t * (box.minLongitude - x), minLatitude: y + t * (box.minLatitude - y),
                maxLongitude: x + t * (box.maxLongitude - x), maxLatitude: y + t * (box.maxLatitude - y)),
            sum: (x + y + t * (sum.lowerBound - x - y))...(x + y + t * (sum.upperBound - x - y)),
            difference: (x - y + t * (difference.lowerBound - x + y))...(x - y + t * (difference.upperBound - x + y)))
    }

    /// The same octagon moved east by `degrees`.
    func shifted(east degrees: Double) -> Octagon {
        guard degrees != 0 else { return self }
        return Octagon(
            box: BoundingBox(
                minLongitude: box.minLongitude + degrees, minLatitude: box.minLatitude,
                maxLongitude: box.maxLongitude + degrees, maxLatitude: box.maxLatitude),
            sum: (sum.lowerBound + degrees)...(sum.upperBound + degrees),
            difference: (difference.lowerBound + degrees)...(difference.upperBound + degrees))
    }

    /// Whether the segment from `p` to `q` meets the octagon grown by `pad` degrees (Liang–Barsky
    /// clipping against its eight half-planes).
    func meets(_ p: SIMD2<Double>, _ q: SIMD2<Double>, pad: Double) -> Bool {
        var low = 0.0
        var high = 1.0
        /// Clips to the side n·x <= bound; false once nothing is left.
        func clip(_ nx: Double, _ ny: Double, _ bound: Double) -> Bool {
            guard bound.isFinite else { return true }
            let room = bound + pad * (abs(nx) + abs(ny)) - (nx * p.x + ny * p.y)
            let rate = nx * (q.x - p.x) + ny * (q.y - p.y)
            if rate == 0 {
                if room < 0 { return false }
            } else if rate > 0 {
                high = min(high, room / rate)
            } else {
                low = max(low, room / rate)
            }
            return low <= high
        }
        guard clip(1, 0, box.maxLongitude), clip(-1, 0, -box.minLongitude),
            clip(0, 1, box.maxLatitude), clip(0, -1, -box.minLatitude),
            clip(1, 1, sum.upperBound), clip(-1, -1, -sum.lowerBound),
            clip(1, -1, difference.upperBound), clip(-1, 1, -difference.lowerBound)
        else { return false }
        return true
    }
}
