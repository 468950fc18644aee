import GeofenceCore

/// What a snapshot shows, as MapKit would overlay it: conditions, a track, events and evaluated points on a
/// basemap of country outlines.
public struct MapContent: Sendable {
    public struct Condition: Sendable {
        public var identifier: String
        public var name: String?
        public var geometry: ConditionGeometry
        public init(identifier: String, name: String? = nil, geometry: ConditionGeometry) {
            (self.identifier, self.name, self.geometry) = (identifier, name, geometry)
        }
    }

    public struct TrackPoint: Sendable {
        public var coordinate: Coordinate
        /// m/s; nil when unknown.
        public var speed: Double?
        public init(coordinate: Coordinate, speed: Double?) { (self.coordinate, self.speed) = (coordinate, speed) }
    }

    public struct Event: Sendable {
        public var coordinate: Coordinate
        /// enter, exit, dwell, crossed (others are drawn as a plain mark).
        public var kind: String
        public var identifier: String
        public init(coordinate: Coordinate, kind: String, identifier: String) {
            (self.coordinate, self.kind, self.identifier) = (coordinate, kind, identifier)
        }
    }

    public struct Point: Sendable {
        public var coordinate: Coordinate
        public var inside: Bool
        public init(coordinate: Coordinate, inside: Bool) { (self.coordinate, self.inside) = (coordinate, inside) }
    }

    public var conditions: [Condition] = []
    public var track: [TrackPoint] = []
    public var events: [Event] = []
    public var points: [Point] = []
    /// Land: pieces of country outlines, each an outer ring and its holes.
    public var basemap: [[[Coordinate]]] = []
    /// Credit for the data shown, in the corner.
    public var attribution = "Country outlines: Natural Earth (public domain)"

    public init() {}

    /// Every coordinate of the overlays (not the basemap): what the view fits.
    var overlayCoordinates: [Coordinate] {
        var all: [Coordinate] = []
        for c in conditions {
            switch c.geometry {
            case .circle(let center, let radius):
                all += GeodesicCircle.outline(center: center, radius: radius, count: 16)
            case .polygon(let parts): all += parts.flatMap { $0.first ?? [] }
            case .corridor(let line, let halfWidth):
                all += line.flatMap { GeodesicCircle.outline(center: $0, radius: halfWidth, count: 8) }
            }
        }
        return all + track.map(\.coordinate) + events.map(\.coordinate) + points.map(\.coordinate)
    }
}
