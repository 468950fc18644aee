import Foundation
import GeofenceCore

/// Issue 34's end-to-end drive: ten minutes east along a straight road from 52° N 5° E at 15 m/s, with a
/// 2.5 m receiver (τ 20 s, GST stating its accuracy). Four circles sit on the road, each truly entered and
/// left once; four sit beside it, 40 m away at their nearest, and a multipath episode pulls the position
/// 120 m north into each (3 s ramps, a hold) while the receiver's accuracy and Doppler stay as they were.
public struct UrbanDrive: Sendable {
    public static let origin = Coordinate(latitude: 52, longitude: 5)
    public static let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
    public static let speed = 15.0
    public static let seconds = 600
    public static let accuracy = 2.5
    /// Circles of 150 m on the road: metres east of the origin.
    public static let roadCircles: [(id: String, x: Double)] = [
        ("road-1", 1_000), ("road-2", 3_000), ("road-3", 5_000), ("road-4", 7_000),
    ]
    /// Circles of 60 m whose centres are 100 m north of the road.
    public static let sideCircles: [(id: String, x: Double)] = [
        ("side-1", 2_000), ("side-2", 4_000), ("side-3", 6_000), ("side-4", 8_000),
    ]

    public let seed: UInt64
    public let multipath: Bool

    public init(seed: UInt64 = 34, multipath: Bool = true) {
        self.seed = seed
        self.multipath = multipath
    }

    /// The transitions the truth gives: each road circle entered and left, in order.
    public static var truth: [String] { roadCircles.flatMap { ["\($0.id) enter", "\($0.id) exit"] } }

    public static var conditions: [(id: String, condition: Condition)] {
        roadCircles.map { ($0.id, try! Condition.circle(center: point(x: $0.x), radius: 150)) }
            + sideCircles.map { ($0.id, try! Condition.circle(center: point(x: $0.x, north: 100), radius: 60)) }
    }

    /// The conditions as a GeoJSON FeatureCollection.
    public static var geoJSON: String {
        let road = roadCircles.map { feature($0.id, point(x: $0.x), radius: 150) }
        let side = sideCircles.map { feature($0.id, point(x: $0.x, north: 100), radius: 60) }
        return #"{"type":"FeatureCollection","features":["# + (road + side).joined(separator: ",") + "]}"
    }

    static func point(x: Double, north: Double = 0) -> Coordinate { Offsets.moved(origin, east: x, north: north) }

    static func feature(_ id: String, _ c: Coordinate, radius: Double) -> String {
        #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(c.longitude),\#(c.latitude)]},"#
            + #""properties":{"radius":\#(radius)}}"#
    }

    /// The episodes: one a side circle, from 6 s before the road passes it, 12 to 16 s long.
    public var episodes: [MultipathEpisode] {
        guard multipath else { return [] }
        return Self.sideCircles.enumerated().map { k, circle in
            .urban(
                start: Self.start.addingTimeInterval(circle.x / Self.speed - 6), duration: 12 + Double(k),
                offset: 120, bearing: 0)
        }
    }

    /// The receiver's fixes, one a second.
    public var fixes: [Location] {
        var receiver = SimulatedReceiver(
            SimulatedReceiver.Profile(accuracy: Self.accuracy, correlationTime: 20), seed: seed)
        receiver.episodes = episodes
        return (0..<Self.seconds).map { k in
            receiver.fix(
                truth: Self.point(x: Double(k) * Self.speed), velocity: (Self.speed, 0),
                at: Self.start.addingTimeInterval(Double(k)))
        }
    }

    /// The fixes as a receiver's NMEA: GGA, RMC and GST for each epoch.
    public var sentences: [String] {
        fixes.map { f in
            NMEA.epoch(
                latitude: f.coordinate.latitude, longitude: f.coordinate.longitude, time: f.timestamp,
                speedKnots: f.speed * 3600 / 1852, course: f.course, sigma: Self.accuracy / 2.0.squareRoot())
        }
    }
}
