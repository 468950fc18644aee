import Foundation
import GeofenceCore

/// A place, shaped like Core Location's `CLPlacemark`: what a coordinate is near, or what a name names.
public struct Placemark: Sendable, Equatable, Codable {
    /// The place's name (a city, town or village of GeoNames).
    public var name: String
    /// The same place as a locality, as `CLPlacemark.locality`.
    public var locality: String
    /// The second-level administrative area (a county, district), when known.
    public var subAdministrativeArea: String?
    /// The first-level administrative area (a state, province, canton), when known.
    public var administrativeArea: String?
    /// ISO 3166-1 alpha-2. From a reverse lookup, only when a country's outline holds the point.
    public var isoCountryCode: String?
    /// The country's English name, with the same rule.
    public var country: String?
    /// The IANA time zone identifier of the place.
    public var timeZoneIdentifier: String?
    /// The place's own position.
    public var location: Coordinate
    public var population: Int
    /// Metres from the query's coordinate to the place, along the ellipsoid; nil for a forward lookup.
    public var distance: Double?

    public var timeZone: TimeZone? { timeZoneIdentifier.flatMap(TimeZone.init(identifier:)) }

    public init(
        name: String, locality: String, subAdministrativeArea: String? = nil, administrativeArea: String? = nil,
        isoCountryCode: String? = nil, country: String? = nil, timeZoneIdentifier: String? = nil, location: Coordinate,
        population: Int, distance: Double? = nil
    ) {
        self.name = name
        self.locality = locality
        self.subAdministrativeArea = subAdministrativeArea
        self.administrativeArea = administrativeArea
        self.isoCountryCode = isoCountryCode
        self.country = country
        self.timeZoneIdentifier = timeZoneIdentifier
        self.location = location
        self.population = population
        self.distance = distance
    }
}

/// Why a lookup gave no answer.
public enum GeocodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The query held no letters or digits.
    case emptyQuery
    /// No place has that name (with those qualifiers).
    case noMatch(String)
    /// A latitude or longitude out of range, or not a number.
    case invalidCoordinate(latitude: Double, longitude: Double)
    /// The gazetteer file could not be read or is not one.
    case dataNotLoaded(String)

    public var description: String {
        switch self {
        case .emptyQuery: "the query is empty: give a place name such as \"Zwolle\" or \"Paris, US\""
        case .noMatch(let q): "no place matches \"\(q)\""
        case .invalidCoordinate(let lat, let lon):
            "latitude must be in [-90, 90] and longitude in [-180, 180], got \(lat), \(lon)"
        case .dataNotLoaded(let why): "the gazetteer is not loaded: \(why)"
        }
    }
}
