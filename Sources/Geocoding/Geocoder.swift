import Foundation
import GeofenceCore

/// Places for coordinates and coordinates for places, offline, shaped like Core Location's `CLGeocoder`.
///
/// Answers come from a `Gazetteer` (GeoNames' places of 1,000 people or more, Natural Earth's countries)
/// in microseconds, so there is no rate limit and no network; the methods are `async` only to keep
/// `CLGeocoder`'s shape.
public struct Geocoder: Sendable {
    private let gazetteer: Gazetteer?
    private let loadError: GeocodingError?

    public init(gazetteer: Gazetteer) {
        self.gazetteer = gazetteer
        loadError = nil
    }

    /// A geocoder whose data could not be loaded: every lookup throws `dataNotLoaded` with the reason.
    public init(unavailable reason: GeocodingError) {
        gazetteer = nil
        loadError = reason
    }

    /// The gazetteer, or the reason there is none.
    public func data() throws(GeocodingError) -> Gazetteer {
        guard let gazetteer else { throw loadError ?? .dataNotLoaded("no gazetteer") }
        return gazetteer
    }

    /// The place nearest to a location (`CLGeocoder.reverseGeocodeLocation`): one placemark, whose
    /// `distance` is how far the place is.
    public func reverseGeocodeLocation(_ location: Coordinate) async throws(GeocodingError) -> [Placemark] {
        [try data().reverse(location)]
    }

    /// Places named `address` (`CLGeocoder.geocodeAddressString`): a name, optionally followed by
    /// qualifiers after commas ("Paris, US", "Springfield, Illinois"), most populous first. `region` is
    /// one more qualifier: a country's ISO code or name, or an administrative area.
    public func geocodeAddressString(_ address: String, in region: String? = nil, limit: Int = 10)
        async throws(GeocodingError) -> [Placemark]
    {
        try data().forward(address, region: region, limit: limit)
    }
}
