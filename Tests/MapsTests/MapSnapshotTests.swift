import Foundation
import GeofenceCore
import LocalServers
import TestSupport
import Testing

@testable import Maps

/// The snapshot's geometry, its determinism, and what a rasteriser makes of it: pixels inside a circle,
/// inside a polygon's hole and along the track.
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
        let a = MapSnapshot().svg(Self.content())
        let b = MapSnapshot().svg(Self.content())
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

    // MARK: Rasterised

    static let center = Coordinate(latitude: 52.0, longitude: 5.0)

    static func content() -> MapContent {
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

    static let rasteriser = "/usr/bin/rsvg-convert"

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: rasteriser)))
    func theRasterisedMapHasTheShapesWhereTheyAre() throws {
        let content = Self.content()
        let snapshot = MapSnapshot(width: 900, height: 700)
        let view = snapshot.view(for: content)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("map-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let svg = directory.appendingPathComponent("map.svg")
        let png = directory.appendingPathComponent("map.png")
        try snapshot.svg(content).write(to: svg, atomically: true, encoding: .utf8)
        let pid = try LocalProcess.spawn(Self.rasteriser, [svg.path, "-o", png.path])
        #expect(LocalProcess.reap(pid, within: 60))
        let image = try PNGImage(Array(Data(contentsOf: png)))
        #expect(image.width == 900 && image.height == 700)

        func colour(_ lat: Double, _ lon: Double) -> (r: Int, g: Int, b: Int) {
            // The median of a 5×5 patch: a dashed graticule line through the spot does not decide.
            let p = view.pixel(longitude: lon, latitude: lat)
            var rs: [Int] = []
            var gs: [Int] = []
            var bs: [Int] = []
            for dy in -2...2 {
                for dx in -2...2 {
                    let c = image[Int(p.x.rounded()) + dx, Int(p.y.rounded()) + dy]
                    rs.append(c.r)
                    gs.append(c.g)
                    bs.append(c.b)
                }
            }
            return (rs.sorted()[12], gs.sorted()[12], bs.sorted()[12])
        }
        func blend(_ over: String, _ alpha: Double, on under: String) -> (r: Int, g: Int, b: Int) {
            let o = Self.rgb(over)
            let u = Self.rgb(under)
            func mix(_ a: Int, _ b: Int) -> Int { Int((Double(a) * alpha + Double(b) * (1 - alpha)).rounded()) }
            return (mix(o.r, u.r), mix(o.g, u.g), mix(o.b, u.b))
        }
        func near(_ a: (r: Int, g: Int, b: Int), _ b: (r: Int, g: Int, b: Int)) -> Bool {
            abs(a.r - b.r) + abs(a.g - b.g) + abs(a.b - b.b) <= 12
        }

        let water = Self.rgb(MapSnapshot.Colors.water)
        // Inside the circle, away from its label: the circle's fill over the water.
        let inCircle = colour(Self.center.latitude + 0.004, Self.center.longitude)
        #expect(near(inCircle, blend(MapSnapshot.Colors.circle, 0.2, on: MapSnapshot.Colors.water)), "\(inCircle)")
        // Just outside the circle (800 m is 0.0072° of latitude): water.
        #expect(near(colour(Self.center.latitude + 0.0085, Self.center.longitude), water))
        // In the polygon's ring, and in its hole (away from the label at the hole's centre).
        let inRing = colour(52.0, 5.0325)
        #expect(near(inRing, blend(MapSnapshot.Colors.polygon, 0.2, on: MapSnapshot.Colors.water)), "\(inRing)")
        let inHole = colour(52.003, 5.0365)
        #expect(near(inHole, water), "the hole shows the water: \(inHole)")
        // Along the track (3 px wide, so not a 5×5 median): the ramp's fastest colour, opaque, at its middle.
        let fastest = Self.rgb(MapSnapshot.Colors.ramp.last!)
        let p = view.pixel(longitude: 5.0105, latitude: 51.975)
        let column = (-2...2).map { image[Int(p.x.rounded()), Int(p.y.rounded()) + $0] }
        #expect(column.contains { near(($0.r, $0.g, $0.b), fastest) }, "\(column)")
        #expect(near(colour(51.977, 5.0105), water), "beside the track it is water again")
    }

    static func rgb(_ hex: String) -> (r: Int, g: Int, b: Int) {
        let v = Int(hex.dropFirst(), radix: 16)!
        return (v >> 16 & 255, v >> 8 & 255, v & 255)
    }
}
