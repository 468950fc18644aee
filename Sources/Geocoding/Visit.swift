import Foundation
import GeofenceCore

/// A visit, shaped like Core Location's `CLVisit`: a stop of the vehicle, with the place the offline
/// geocoder names for it.
public struct Visit: Sendable, Equatable {
    public var arrivalDate: Date
    /// `Date.distantFuture` while the vehicle is still there, as `CLVisit` has it.
    public var departureDate: Date
    public var coordinate: Coordinate
    /// The 1-sigma radius of the stop's position, metres.
    public var horizontalAccuracy: Double
    public var placemark: Placemark?

    public init(_ stop: Stop, placemark: Placemark?) {
        arrivalDate = stop.arrival
        departureDate = stop.departure ?? .distantFuture
        coordinate = stop.coordinate
        horizontalAccuracy = stop.horizontalAccuracy
        self.placemark = placemark
    }
}

extension Geocoder {
    /// The visit a stop makes, with its place (nil when the gazetteer has no answer or is not loaded).
    public func visit(_ stop: Stop) async -> Visit {
        Visit(stop, placemark: try? await reverseGeocodeLocation(stop.coordinate).first)
    }
}
