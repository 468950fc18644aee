import Foundation
import GeofenceCore
import LocalServers
import TestSupport
import Testing

@testable import Maps

/// What a rasteriser makes of a snapshot: pixels inside a circle, inside a polygon's hole and along the
/// track.
@Suite(.offTheCooperativePool(.waiting)) struct RasterisedMapTests {

    static let rasteriser = "/usr/bin/rsvg-convert"

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: rasteriser)))
    func theRasterisedMapHasTheShapesWhereTheyAre() throws {
        let content = SampleMap.content()
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
        let inCircle = colour(SampleMap.center.latitude + 0.004, SampleMap.center.longitude)
        #expect(near(inCircle, blend(MapSnapshot.Colors.circle, 0.2, on: MapSnapshot.Colors.water)), "\(inCircle)")
        // Just outside the circle (800 m is 0.0072° of latitude): water.
        #expect(near(colour(SampleMap.center.latitude + 0.0085, SampleMap.center.longitude), water))
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
