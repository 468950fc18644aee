import Foundation

extension Region {
    /// Bounds on lon + lat and lon − lat that hold the whole region, in the frame of `boundingBox`, or
    /// nil when none is known. With the box they make an octagon that cuts off the box's corners,
    /// where a round region leaves room that would otherwise need a further read to rule out.
    func outerDiagonals() -> (sum: ClosedRange<Double>, difference: ClosedRange<Double>)? {
        switch self {
        case .circle(let c): c.outerDiagonals()
        case .polygon(let p): p.outerDiagonals()
        case .corridor: nil
        }
    }
}

extension CircleRegion {
    /// The circle lies in the ellipse inscribed in its box: the box's half-sizes come from the
    /// padded radius at the smallest scale of degrees to metres over the circle, so a point `x`, `y`
    /// metres from the centre is within `x / halfWidth`, `y / halfHeight` of it in degrees. That
    /// ellipse reaches √(A² + B²) along either diagonal.
    func outerDiagonals() -> (sum: ClosedRange<Double>, difference: ClosedRange<Double>)? {
        guard abs(center.latitude) < 80, radius < 100_000 else { return nil }
        let box = boundingBox
        guard box.maxLongitude - box.minLongitude < 180 else { return nil }
        let x = (box.minLongitude + box.maxLongitude) / 2
        let y = (box.minLatitude + box.maxLatitude) / 2
        let a = (box.maxLongitude - box.minLongitude) / 2
        let b = (box.maxLatitude - box.minLatitude) / 2
        let reach = (a * a + b * b).squareRoot()
        return ((x + y - reach)...(x + y + reach), (x - y - reach)...(x - y + reach))
    }
}

extension PolygonRegion {
    /// Edges are straight in lon/lat, so lon ± lat is extreme at a vertex.
    func outerDiagonals() -> (sum: ClosedRange<Double>, difference: ClosedRange<Double>)? {
        var sum = (Double.infinity, -Double.infinity)
        var difference = (Double.infinity, -Double.infinity)
        for v in vertices {
            // Only when every vertex is in the box's frame (a part may sit a turn away from it).
            guard boundingBox.contains(unwrappedLongitude: v.x) else { return nil }
            sum = (min(sum.0, v.x + v.y), max(sum.1, v.x + v.y))
            difference = (min(difference.0, v.x - v.y), max(difference.1, v.x - v.y))
        }
        guard sum.0 <= sum.1 else { return nil }
        return (sum.0...sum.1, difference.0...difference.1)
    }
}

extension BoundingBox {
    func contains(unwrappedLongitude x: Double) -> Bool { x >= minLongitude && x <= maxLongitude }
}
