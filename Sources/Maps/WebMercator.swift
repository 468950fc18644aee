import Foundation
import GeofenceCore

/// The Web Mercator view of a snapshot: longitude and latitude to pixels, fitted to a box.
public struct MapView: Sendable, Equatable {
    /// The box shown: west, south, east, north (degrees; east may exceed 180 for a view across the antimeridian).
    public let west: Double, south: Double, east: Double, north: Double
    public let width: Double, height: Double
    /// Pixels per unit of Mercator x (a full turn of longitude is one unit).
    let scale: Double
    let originX: Double, originY: Double

    /// Mercator latitudes stop here, as web maps do.
    public static let maximumLatitude = 85.051_128_78

    /// A view of the box, as large as fits in `width` × `height` with `margin` pixels around it, centred.
    public init(
        west: Double, south: Double, east: Double, north: Double, width: Double, height: Double, margin: Double = 24
    ) {
        (self.west, self.south, self.east, self.north, self.width, self.height) = (
            west, south, east, north, width, height
        )
        let x0 = Self.x(west)
        let x1 = Self.x(east)
        let y0 = Self.y(north)
        let y1 = Self.y(south)
        // A box of no extent (one point) is shown at about 1:10,000 around it.
        let spanX = max(x1 - x0, 1e-6)
        let spanY = max(y1 - y0, 1e-6)
        scale = min((width - 2 * margin) / spanX, (height - 2 * margin) / spanY)
        originX = (x0 + x1) / 2 - width / 2 / scale
        originY = (y0 + y1) / 2 - height / 2 / scale
    }

    static func x(_ longitude: Double) -> Double { (longitude + 180) / 360 }

    static func y(_ latitude: Double) -> Double {
        let phi = min(max(latitude, -maximumLatitude), maximumLatitude) * .pi / 180
        return (1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2
    }

    /// The pixel of a coordinate; `longitude` may be unwrapped past ±180 to follow a shape across the antimeridian.
    public func pixel(longitude: Double, latitude: Double) -> (x: Double, y: Double) {
        ((Self.x(longitude) - originX) * scale, (Self.y(latitude) - originY) * scale)
    }

    /// The coordinate at a pixel.
    public func coordinate(x: Double, y: Double) -> (longitude: Double, latitude: Double) {
        let mx = x / scale + originX
        let my = y / scale + originY
        return (mx * 360 - 180, atan(sinh(.pi * (1 - 2 * my))) * 180 / .pi)
    }

    /// What the whole picture shows, which is more than the box in one direction when their shapes differ:
    /// west, south, east, north.
    public var visible: (west: Double, south: Double, east: Double, north: Double) {
        let topLeft = coordinate(x: 0, y: 0)
        let bottomRight = coordinate(x: width, y: height)
        return (topLeft.longitude, bottomRight.latitude, bottomRight.longitude, topLeft.latitude)
    }

    /// Pixels per metre on the ground at a latitude (Mercator is conformal: the same in every direction).
    public func pixelsPerMetre(atLatitude latitude: Double) -> Double {
        scale / (2 * .pi * WGS84.a * cos(min(abs(latitude), Self.maximumLatitude) * .pi / 180))
    }
}
