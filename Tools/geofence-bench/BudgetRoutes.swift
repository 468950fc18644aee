import AgentFormats
import Foundation
import GeofenceCore
import ReceiverSimulation

/// The inputs of `geofence-bench budget`: a half-hour drive at 1 Hz through 14 circles, and a vehicle
/// parked as long, both with a receiver's correlated error (1-sigma 2.5 m a axis, 30 s correlation).
enum BudgetRoutes {
    static let start = Date(timeIntervalSince1970: 1_767_225_600)
    static let origin = Coordinate(latitude: 52.0, longitude: 5.0)
    static let metresPerDegreeLatitude = 111_320.0
    static let metresPerDegreeLongitude = 111_320.0 * cos(52.0 * .pi / 180)
    /// A 3 km square driven round at 12 m/s (about 43 km/h): 1,000 s a lap.
    static let side = 3_000.0
    static let speed = 12.0
    static let circles = 14
    static let radius = 60.0

    /// The point `distance` metres along the square, east then north then west then south, in metres.
    static func alongSquare(_ distance: Double) -> (east: Double, north: Double) {
        let d = distance.truncatingRemainder(dividingBy: 4 * side)
        switch d {
        case ..<side: return (d, 0)
        case ..<(2 * side): return (side, d - side)
        case ..<(3 * side): return (side - (d - 2 * side), side)
        default: return (0, side - (d - 3 * side))
        }
    }

    static func coordinate(east: Double, north: Double) -> Coordinate {
        Coordinate(
            latitude: origin.latitude + north / metresPerDegreeLatitude,
            longitude: origin.longitude + east / metresPerDegreeLongitude)
    }

    /// `fixes` points a second, driving round the square or parked at its corner.
    static func gpx(fixes: Int, driving: Bool, seed: UInt64 = 7) -> String {
        var rng = SplitMix64(seed: seed)
        var error = GaussMarkovError(sigmaPerAxis: 2.5, correlationTime: 30)
        var points: [String] = []
        points.reserveCapacity(fixes)
        for k in 0..<fixes {
            let (east, north) = driving ? alongSquare(Double(k) * speed) : (-200, -200)
            let noise = error.next(after: 1, using: &rng)
            let c = coordinate(east: east + noise.east, north: north + noise.north)
            let time = iso8601(start.addingTimeInterval(Double(k)))
            // The receiver's Doppler speed: the vehicle's, or a few cm/s of noise when parked.
            let speed = driving ? speed + 0.2 * Gaussian.next(&rng) : abs(0.03 * Gaussian.next(&rng))
            points.append(
                #"<trkpt lat="\#(c.latitude)" lon="\#(c.longitude)"><ele>2</ele><time>\#(time)</time>"#
                    + #"<speed>\#(max(0, speed))</speed></trkpt>"#)
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="geofence-bench budget" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>budget</name><trkseg>
            \(points.joined(separator: "\n"))
            </trkseg></trk></gpx>
            """
    }

    /// 14 circles spread evenly along the square's edge, each entered and left once a lap.
    static var conditions: String {
        let features = (0..<circles).map { k -> String in
            let (east, north) = alongSquare((Double(k) + 0.5) * 4 * side / Double(circles))
            let c = coordinate(east: east, north: north)
            return #"{"type":"Feature","id":"z\#(k)","geometry":{"type":"Point","coordinates":"#
                + #"[\#(c.longitude),\#(c.latitude)]},"properties":{"radius":\#(radius),"name":"Zone \#(k)"}}"#
        }
        return #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#
    }
}
