import AgentFormats
import Geocoding

/// Where a position is, as events, live updates and the status carry it (docs/topics.md): the nearest
/// place, its first-level administrative area, the country whose outline holds the position, and how far
/// the place is.
public struct PlaceSummary: Sendable, Codable, Equatable {
    public var locality: String
    public var administrativeArea: String?
    public var isoCountryCode: String?
    /// Metres from the position to the place.
    public var distance: Double

    public init(_ p: Placemark) {
        locality = p.locality
        administrativeArea = p.administrativeArea
        isoCountryCode = p.isoCountryCode
        distance = ((p.distance ?? 0) * 10).rounded() / 10
    }

    package var json: String {
        var line = JSONLine()
        line.add("locality", locality)
        line.add("administrativeArea", orNull: administrativeArea)
        line.add("isoCountryCode", orNull: isoCountryCode)
        line.add("distance", distance)
        return line.text
    }
}
