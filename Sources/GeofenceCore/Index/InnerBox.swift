import Foundation

extension Region {
    /// A lon/lat box that the region surely covers whole, as large as is cheap to find, or nil.
    /// The index clips it to each cell, so that a point inside it is answered with no other read.
    /// In the frame of `boundingBox`, and never across the antimeridian.
    func innerBox() -> BoundingBox? {
        switch self {
        case .circle(let c): c.innerBox()
        case .polygon(let p): p.innerBox()
        case .corridor: nil
        }
    }
}

extension CircleRegion {
    /// The square (in metres) inscribed in the circle, shrunk until each corner is provably inside.
    /// Enough, because the distance from the centre grows along a parallel away from the centre's
    /// meridian and has one minimum along a meridian, so over the box it is largest at a corner.
    func innerBox() -> BoundingBox? {
        guard abs(center.latitude) < 80, radius > 1, radius < 100_000 else { return nil }
        let projection = LocalProjection(origin: center)
        let limit = radius * (1 - 1e-4) - 0.01
        var half = radius / 2.squareRoot() * 0.995
        for _ in 0..<4 {
            let dLat = half / projection.metresPerDegreeLatitude, dLon = half / projection.metresPerDegreeLongitude
            let box = BoundingBox(
                minLongitude: center.longitude - dLon, minLatitude: center.latitude - dLat,
                maxLongitude: center.longitude + dLon, maxLatitude: center.latitude + dLat)
            guard box.minLongitude > -180, box.maxLongitude < 180 else { return nil }
            let corners = [(box.minLongitude, box.minLatitude), (box.maxLongitude, box.minLatitude),
                           (box.minLongitude, box.maxLatitude), (box.maxLongitude, box.maxLatitude)]
            let inside = corners.allSatisfy { lon, lat in
                let chord = ECEF(Coordinate(latitude: lat, longitude: lon)).chord(to: centerECEF)
                return chord < ChordBounds.maximumChord && ChordBounds.upper(chord: chord) <= limit
            }
            if inside { return box }
            half *= 0.95
        }
        return nil
    }
}

extension PolygonRegion {
    /// The largest box, of the same shape as a part's box and centred on it, that no edge meets, when
    /// that centre is inside: then the whole box is inside. Found by bisection on its scale.
    func innerBox() -> BoundingBox? {
        guard boundingBox.minLongitude >= -180, boundingBox.maxLongitude <= 180 else { return nil }
        var best: BoundingBox?
        var bestArea = 0.0
        for part in parts {
            let cx = (part.box.minLongitude + part.box.maxLongitude) / 2, cy = (part.box.minLatitude + part.box.maxLatitude) / 2
            guard contains(longitude: cx, latitude: cy) else { continue }
            let hx = (part.box.maxLongitude - part.box.minLongitude) / 2, hy = (part.box.maxLatitude - part.box.minLatitude) / 2
            func box(_ scale: Double) -> BoundingBox {
                BoundingBox(minLongitude: cx - scale * hx, minLatitude: cy - scale * hy,
                            maxLongitude: cx + scale * hx, maxLatitude: cy + scale * hy)
            }
            var low = 0.0, high = 1.0
            for _ in 0..<10 {
                let middle = (low + high) / 2
                if meetsNoEdge(box(middle)) { low = middle } else { high = middle }
            }
            let area = low * low * hx * hy
            if low > 0, area > bestArea { best = box(low); bestArea = area }
        }
        return best
    }

    /// Whether no edge of any ring meets the box, padded for rounding.
    private func meetsNoEdge(_ box: BoundingBox) -> Bool {
        let pad = Region.subcellPad
        let x0 = box.minLongitude - pad, y0 = box.minLatitude - pad, x1 = box.maxLongitude + pad, y1 = box.maxLatitude + pad
        for ring in rings {
            for k in (ring.start + 1)..<ring.end {
                let a = vertices[k - 1], b = vertices[k]
                guard max(a.x, b.x) >= x0, min(a.x, b.x) <= x1, max(a.y, b.y) >= y0, min(a.y, b.y) <= y1 else { continue }
                if segmentMeetsBox(a, b, x0: x0, y0: y0, x1: x1, y1: y1) { return false }
            }
        }
        return true
    }
}
