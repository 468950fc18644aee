import Foundation

extension Region {
    /// An octagon (or a box) that the region surely covers whole, as large as is cheap to find, or nil.
    /// The index clips it to each cell, so that a point inside it is answered with no other read.
    /// In the frame of `boundingBox`, and never across the antimeridian.
    func innerOctagon() -> Octagon? {
        switch self {
        case .circle(let c): c.innerOctagon()
        case .polygon(let p): p.innerOctagon()
        case .corridor: nil
        }
    }
}

extension CircleRegion {
    /// The octagon inscribed in the circle, shrunk until each vertex is provably inside. Checking the
    /// vertices is enough: over so small a region the squared distance from the centre is convex
    /// along any lon/lat-straight line, so on each side it is largest at a vertex. Only the eastern
    /// four are checked: distance from the centre is symmetric about its meridian, and the margin
    /// under the radius is far above the rounding that could tell mirrored vertices apart.
    func innerOctagon() -> Octagon? {
        guard abs(center.latitude) < 80, radius > 1, radius < 100_000 else { return nil }
        let projection = LocalProjection(origin: center)
        let limit = radius * (1 - 1e-4) - 0.01
        var scale = radius * 0.995
        for _ in 0..<4 {
            let (octagon, vertices) = Octagon.inscribed(
                x: center.longitude, y: center.latitude,
                a: scale / projection.metresPerDegreeLongitude, b: scale / projection.metresPerDegreeLatitude)
            guard octagon.box.minLongitude > -180, octagon.box.maxLongitude < 180 else { return nil }
            let inside = vertices.filter { $0.x > center.longitude }.allSatisfy { v in
                let chord = ECEF(Coordinate(latitude: v.y, longitude: v.x)).chord(to: centerECEF)
                return chord < ChordBounds.maximumChord && ChordBounds.upper(chord: chord) <= limit
            }
            if inside { return octagon }
            scale *= 0.95
        }
        return nil
    }
}

extension PolygonRegion {
    /// The larger of two shapes centred on a part's box, when that centre is inside: the box's shape
    /// scaled, or the octagon inscribed in the box's ellipse scaled. Each is scaled by bisection to
    /// the largest size that no edge meets; then the whole shape is inside.
    func innerOctagon() -> Octagon? {
        guard boundingBox.minLongitude >= -180, boundingBox.maxLongitude <= 180 else { return nil }
        var best: Octagon?
        for part in parts {
            let cx = (part.box.minLongitude + part.box.maxLongitude) / 2
            let cy = (part.box.minLatitude + part.box.maxLatitude) / 2
            guard contains(longitude: cx, latitude: cy) else { continue }
            let hx = (part.box.maxLongitude - part.box.minLongitude) / 2
            let hy = (part.box.maxLatitude - part.box.minLatitude) / 2
            let octagon = Octagon.inscribed(x: cx, y: cy, a: hx, b: hy).octagon
            for (shape, largest) in [(Octagon(box: part.box), 1.0), (octagon, 1.5)] {
                var low = 0.0
                var high = largest
                for _ in 0..<8 {
                    let middle = (low + high) / 2
                    if meetsNoEdge(shape.scaled(by: middle, aboutX: cx, y: cy)) { low = middle } else { high = middle }
                }
                guard low > 0 else { continue }
                let found = shape.scaled(by: low, aboutX: cx, y: cy)
                if found.area > best?.area ?? 0 { best = found }
            }
        }
        return best
    }

    /// Whether no edge of any ring meets the octagon, padded for rounding.
    private func meetsNoEdge(_ octagon: Octagon) -> Bool {
        let pad = Region.subcellPad
        let x0 = octagon.box.minLongitude - pad
        let y0 = octagon.box.minLatitude - pad
        let x1 = octagon.box.maxLongitude + pad
        let y1 = octagon.box.maxLatitude + pad
        for ring in rings {
            for k in (ring.start + 1)..<ring.end {
                let a = vertices[k - 1]
                let b = vertices[k]
                guard max(a.x, b.x) >= x0, min(a.x, b.x) <= x1, max(a.y, b.y) >= y0, min(a.y, b.y) <= y1 else {
                    continue
                }
                if octagon.meets(a, b, pad: pad) { return false }
            }
        }
        return true
    }
}
