import Foundation
import GeofenceCore

/// The benchmark's world: conditions scattered in a square and fixes that move through it.
struct Scenario {
    /// The square's south-west corner (southern Germany) and size.
    static let origin = Coordinate(latitude: 47.5, longitude: 6.0)
    let spanKilometres: Double
    let metresPerDegreeLatitude = 111_200.0
    var metresPerDegreeLongitude: Double {
        metresPerDegreeLatitude * cos((Self.origin.latitude + spanKilometres / 222.4) * .pi / 180)
    }

    func randomPoint(_ rng: inout SplitMix64) -> Coordinate {
        Coordinate(
            latitude: Self.origin.latitude + Double.random(in: 0..<spanKilometres * 1000, using: &rng)
                / metresPerDegreeLatitude,
            longitude: Self.origin.longitude + Double.random(in: 0..<spanKilometres * 1000, using: &rng)
                / metresPerDegreeLongitude)
    }

    /// Half circles, half polygons of 8 to 64 vertices; sizes log-uniform from 50 m to 5 km.
    func conditions(count: Int, seed: UInt64) -> [Condition] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { k in
            let center = randomPoint(&rng)
            let size = exp(Double.random(in: log(50.0)...log(5000.0), using: &rng))
            if k % 2 == 0 { return try! Condition.circle(center: center, radius: size) }
            // A star-shaped polygon: one vertex in each of n equal sectors, radii between 60% and 100% of the
            // size. No gap between angles reaches π, so the ring is simple.
            let n = Int.random(in: 8...64, using: &rng)
            let angles = (0..<n).map { k in (Double(k) + Double.random(in: 0..<0.9, using: &rng)) * 2 * .pi / Double(n)
            }
            var ring = angles.map { a -> Coordinate in
                let r = size * Double.random(in: 0.6...1, using: &rng)
                return Coordinate(
                    latitude: center.latitude + r * sin(a) / metresPerDegreeLatitude,
                    longitude: center.longitude + r * cos(a) / metresPerDegreeLongitude)
            }
            ring.append(ring[0])
            return try! Condition(geometry: .polygon(parts: [[ring]]))
        }
    }

    func randomFixes(count: Int, seed: UInt64) -> [Coordinate] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in randomPoint(&rng) }
    }

    /// 1 Hz tracks at up to 40 m/s that turn gently and bounce off the square's edges.
    func trackFixes(count: Int, seed: UInt64) -> [Coordinate] {
        var rng = SplitMix64(seed: seed)
        var out: [Coordinate] = []
        var position = randomPoint(&rng)
        var heading = Double.random(in: 0..<(2 * .pi), using: &rng)
        var speed = Double.random(in: 5...40, using: &rng)
        let span = spanKilometres * 1000
        for _ in 0..<count {
            heading += Double.random(in: -0.15...0.15, using: &rng)
            speed = min(40, max(0, speed + Double.random(in: -2...2, using: &rng)))
            var y = (position.latitude - Self.origin.latitude) * metresPerDegreeLatitude + speed * cos(heading)
            var x = (position.longitude - Self.origin.longitude) * metresPerDegreeLongitude + speed * sin(heading)
            if x < 0 || x >= span {
                heading = -heading
                x = min(max(x, 0), span - 1)
            }
            if y < 0 || y >= span {
                heading = .pi - heading
                y = min(max(y, 0), span - 1)
            }
            position = Coordinate(
                latitude: Self.origin.latitude + y / metresPerDegreeLatitude,
                longitude: Self.origin.longitude + x / metresPerDegreeLongitude)
            out.append(position)
        }
        return out
    }
}
