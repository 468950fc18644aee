import Foundation
import GeofenceCore
import TestSupport
import Testing

@testable import Maps

/// The snapshot's geometry and its determinism (`RasterisedMapTests` rasterises it).
@Suite(.offTheCooperativePool(.waiting)) struct MapSnapshotTests {
    @Test(arguments: [
        (52.37, 4.89, 150.0), (78.2, 15.6, 5_000), (-33.9, 151.2, 25), (-17.0, 179.999, 2_000), (0, 0, 40_000),
    ])
    func aCircleOutlineLiesAtItsRadiusAlongTheEllipsoid(lat: Double, lon: Double, radius: Double) {
        let center = Coordinate(latitude: lat, longitude: lon)
        let outline = GeodesicCircle.outline(center: center, radius: radius, count: 36)
        #expect(outline.count == 36)
        for (k, p) in outline.enumerated() {
            let (distance, bearing) = Geodesic.inverse(center, p)
            #expect(abs(distance - radius) < 0.001, "\(k): \(distance) m")
            #expect(abs(remainder(bearing - Double(k) * 10, 360)) < 1e-6, "\(k): bearing \(bearing)")
        }
    }

    @Test func theProjectionRoundTripsAndIsConformal() {
        let view = MapView(west: 4.8, south: 52.3, east: 5.0, north: 52.4, width: 1200, height: 800)
        let p = view.pixel(longitude: 4.9, latitude: 52.35)
        let back = view.coordinate(x: p.x, y: p.y)
        #expect(abs(back.longitude - 4.9) < 1e-9 && abs(back.latitude - 52.35) < 1e-9)
        // 1 km east and 1 km north cover the same pixels (to the curvature's second order).
        let perMetre = view.pixelsPerMetre(atLatitude: 52.35)
        let east = view.pixel(longitude: 4.9 + 1_000 / (111_320 * cos(52.35 * .pi / 180)), latitude: 52.35)
        #expect(abs((east.x - p.x) / perMetre - 1_000) < 5)
    }

    @Test func theSameContentGivesTheSameBytes() {
        let a = MapSnapshot().svg(SampleMap.content())
        let b = MapSnapshot().svg(SampleMap.content())
        #expect(a == b)
        #expect(a.hasPrefix("<?xml") && a.hasSuffix("</svg>\n"))
    }

    @Test func aPolygonAcrossTheAntimeridianStaysWhole() throws {
        var content = MapContent()
        let ring = [(178.0, -17.0), (-178.0, -17.0), (-178.0, -19.0), (178.0, -19.0), (178.0, -17.0)].map {
            Coordinate(latitude: $0.1, longitude: $0.0)
        }
        content.conditions = [.init(identifier: "fiji", geometry: .polygon(parts: [[ring]]))]
        let snapshot = MapSnapshot()
        let view = snapshot.view(for: content)
        #expect(view.east - view.west < 10, "the view spans \(view.west)…\(view.east), not the whole world")
        let svg = snapshot.svg(content)
        let d = try #require(svg.range(of: #"<path d="M"#).map { svg[$0.upperBound...].prefix { $0 != "\"" } })
        let xs = d.split(whereSeparator: { "MLZ".contains($0) }).compactMap { Double($0.split(separator: ",")[0]) }
        #expect(xs.allSatisfy { $0 > 0 && $0 < 1200 }, "\(xs)")
    }
}
