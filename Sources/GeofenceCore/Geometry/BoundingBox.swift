/// A lon/lat box. `maxLongitude` may exceed 180 for a box that crosses the antimeridian, so that
/// `minLongitude <= maxLongitude` always holds and the box is one interval in unwrapped longitude.
public struct BoundingBox: Sendable, Hashable {
    public var minLongitude: Double
    public var minLatitude: Double
    public var maxLongitude: Double
    public var maxLatitude: Double

    public init(minLongitude: Double, minLatitude: Double, maxLongitude: Double, maxLatitude: Double) {
        self.minLongitude = minLongitude
        self.minLatitude = minLatitude
        self.maxLongitude = maxLongitude
        self.maxLatitude = maxLatitude
    }

    /// The box of unwrapped points, shifted so that its west edge lies in [-180, 180).
    init<S: Sequence>(unwrapped points: S) where S.Element == SIMD2<Double> {
        var minX = Double.infinity
        var minY = Double.infinity
        var maxX = -Double.infinity
        var maxY = -Double.infinity
        for p in points {
            minX = min(minX, p.x)
            maxX = max(maxX, p.x)
            minY = min(minY, p.y)
            maxY = max(maxY, p.y)
        }
        let shift = minX < -180 ? 360.0 : (minX >= 180 ? -360.0 : 0)
        self.init(minLongitude: minX + shift, minLatitude: minY, maxLongitude: maxX + shift, maxLatitude: maxY)
    }

    /// The longitude equal to `longitude` modulo 360 that falls within the box, if any.
    @inline(__always)
    func unwrappedLongitude(_ longitude: Double) -> Double? {
        if longitude >= minLongitude && longitude <= maxLongitude { return longitude }
        let east = longitude + 360
        if east >= minLongitude && east <= maxLongitude { return east }
        return nil
    }

    @inline(__always)
    func contains(longitude: Double, latitude: Double) -> Bool {
        latitude >= minLatitude && latitude <= maxLatitude && unwrappedLongitude(longitude) != nil
    }

    /// The union with another box (assumed in the same longitude frame).
    func union(_ o: BoundingBox) -> BoundingBox {
        BoundingBox(
            minLongitude: min(minLongitude, o.minLongitude), minLatitude: min(minLatitude, o.minLatitude),
            maxLongitude: max(maxLongitude, o.maxLongitude), maxLatitude: max(maxLatitude, o.maxLatitude))
    }

    /// Grown by degrees on each side, clamped to the globe.
    func expanded(longitude dLon: Double, latitude dLat: Double) -> BoundingBox {
        var box = BoundingBox(
            minLongitude: minLongitude - dLon, minLatitude: max(minLatitude - dLat, -90),
            maxLongitude: maxLongitude + dLon, maxLatitude: min(maxLatitude + dLat, 90))
        if box.maxLongitude - box.minLongitude >= 360 || box.minLatitude <= -90 || box.maxLatitude >= 90 {
            // Touching a pole or wider than the globe: every longitude.
            box.minLongitude = -180
            box.maxLongitude = 180
        } else if box.minLongitude < -180 {
            box.minLongitude += 360
            box.maxLongitude += 360
        }
        return box
    }
}
