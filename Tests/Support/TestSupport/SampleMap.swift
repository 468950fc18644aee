import GeofenceCore
import Maps

/// A map with a circle, a polygon with a hole and a track: what the map tests draw, in process and rasterised.
public enum SampleMap {
    public static let center = Coordinate(latitude: 52.0, longitude: 5.0)

    public static func content() -> MapContent {
        var content = MapContent()
        let outer = [(5.03, 51.99), (5.05, 51.99), (5.05, 52.01), (5.03, 52.01), (5.03, 51.99)].map {
            Coordinate(latitude: $0.1, longitude: $0.0)
        }
        let hole = [(5.035, 51.995), (5.035, 52.005), (5.045, 52.005), (5.045, 51.995), (5.035, 51.995)].map {
            Coordinate(latitude: $0.1, longitude: $0.0)
        }
        content.conditions = [
            .init(identifier: "depot", name: "Depot", geometry: .circle(center: center, radius: 800)),
            .init(identifier: "yard", geometry: .polygon(parts: [[outer, hole]])),
        ]
        content.track = (0...20).map { k in
            .init(coordinate: Coordinate(latitude: 51.975, longitude: 4.99 + Double(k) * 0.003), speed: 20)
        }
        return content
    }
}
