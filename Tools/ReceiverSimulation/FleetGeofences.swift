import Foundation
import GeofenceCore

/// What a national fleet's back office pushes: one geofence per customer address, half circles and half
/// polygons of 8 to 64 vertices, scattered over a square of `side` metres. Deterministic for a seed, so
/// that a benchmark and a test see the same set.
public struct FleetGeofences: Sendable {
    public struct Geofence: Sendable {
        public var identifier: String
        /// The GeoJSON Feature as an operator would publish it (empty: a deletion).
        public var feature: String

        public init(identifier: String, feature: String) {
            self.identifier = identifier
            self.feature = feature
        }
    }

    public var count: Int
    public var centre: Coordinate
    public var side: Double
    public var seed: UInt64

    public init(
        count: Int, centre: Coordinate = Coordinate(latitude: 51.0, longitude: 10.0), side: Double = 1_000_000,
        seed: UInt64 = 16
    ) {
        self.count = count
        self.centre = centre
        self.side = side
        self.seed = seed
    }

    /// Every geofence, identifiers `g000000`, `g000001`, ….
    public var geofences: [Geofence] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { k in
            let east = (Double(rng.next() >> 11) / Double(1 << 53) - 0.5) * side
            let north = (Double(rng.next() >> 11) / Double(1 << 53) - 0.5) * side
            let at = Offsets.moved(centre, east: east, north: north)
            let identifier = String(format: "g%06d", k)
            let radius = 30 + Double(rng.next() % 170)
            if k % 2 == 0 {
                return Geofence(identifier: identifier, feature: Self.circle(identifier, at, radius: radius))
            }
            let vertices = 8 + Int(rng.next() % 57)
            var ring: [Coordinate] = (0..<vertices).map { v in
                let angle = 2 * Double.pi * Double(v) / Double(vertices)
                let r = radius * (0.7 + 0.3 * Double(rng.next() % 1000) / 1000)
                return Offsets.moved(at, east: r * cos(angle), north: r * sin(angle))
            }
            ring.append(ring[0])
            return Geofence(identifier: identifier, feature: Self.polygon(identifier, ring))
        }
    }

    static func circle(_ identifier: String, _ c: Coordinate, radius: Double) -> String {
        #"{"type":"Feature","id":"\#(identifier)","geometry":{"type":"Point","coordinates":[\#(f(c.longitude)),\#(f(c.latitude))]},"properties":{"radius":\#(radius),"name":"Customer \#(identifier)","version":1}}"#
    }

    static func polygon(_ identifier: String, _ ring: [Coordinate]) -> String {
        let coordinates = ring.map { "[\(f($0.longitude)),\(f($0.latitude))]" }.joined(separator: ",")
        return
            #"{"type":"Feature","id":"\#(identifier)","geometry":{"type":"Polygon","coordinates":[[\#(coordinates)]]},"properties":{"name":"Customer \#(identifier)","version":1}}"#
    }

    /// Seven decimals: about a centimetre, what an operator's tools write.
    static func f(_ value: Double) -> String { String(format: "%.7f", value) }
}
