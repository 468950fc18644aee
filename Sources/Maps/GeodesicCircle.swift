import Foundation
import GeofenceCore

/// The outline of a geodesic circle: the points at exactly `radius` metres along the ellipsoid from the
/// centre, every `360 / count` degrees of initial bearing, not a circle drawn in the projection.
public enum GeodesicCircle {
    public static func outline(center: Coordinate, radius: Double, count: Int = 96) -> [Coordinate] {
        // Metres per degree at the centre: the plane of the first guesses.
        let perLatitude = WGS84.meridionalRadius(latitude: center.latitude) * .pi / 180
        let perLongitude = max(
            WGS84.primeVerticalRadius(latitude: center.latitude) * cos(center.latitude * .pi / 180) * .pi / 180, 1e-6)
        func at(east: Double, north: Double) -> Coordinate {
            // Unwrapped longitude, so that a circle across the antimeridian stays one ring.
            Coordinate(
                latitude: min(max(center.latitude + north / perLatitude, -90), 90),
                longitude: center.longitude + east / perLongitude)
        }
        return (0..<count).map { k in
            let bearing = Double(k) * 2 * .pi / Double(count)
            // A first guess in the local plane, corrected until the inverse gives the distance and bearing
            // asked for (the direct problem by Newton steps on the inverse, which is exact to a millimetre).
            var east = radius * sin(bearing)
            var north = radius * cos(bearing)
            var point = at(east: east, north: north)
            for _ in 0..<4 {
                let (distance, azimuth) = Geodesic.inverse(center, point)
                guard distance > 0 else { break }
                let a = azimuth * .pi / 180
                // The error as a vector in the plane, removed from the guess.
                east += radius * sin(bearing) - distance * sin(a)
                north += radius * cos(bearing) - distance * cos(a)
                point = at(east: east, north: north)
            }
            return point
        }
    }
}
