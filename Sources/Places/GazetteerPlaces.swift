import AgentFormats
import Geocoding
import GeofenceCore
import SystemMemory
import ThreadExecution

/// Places from the offline gazetteer.
package struct GazetteerPlaces: PlaceFinding {
    package let gazetteer: Gazetteer

    package func place(at coordinate: Coordinate) -> PlaceSummary? {
        (try? gazetteer.reverse(coordinate)).map(PlaceSummary.init)
    }

    /// Loads the gazetteer on a thread of its own (reading an 18 MB file and building its outline index
    /// blocks for 60–90 ms), or says why it could not. The heap the load freed (the file's bytes, the
    /// outlines' scratch) is given back, so the agent keeps about 27 MB for places rather than 50.
    package static func load(path explicit: String?) async -> Result<GazetteerPlaces, GeocodingError> {
        guard let path = GazetteerFile.locate(explicit: explicit) else {
            return .failure(
                .dataNotLoaded(
                    "no gazetteer found (scripts/setup builds gazetteer/gazetteer.bin; places.gazetteer names another)")
            )
        }
        let loaded = await onOwnThread(name: "gazetteer-load") { () -> Result<GazetteerPlaces, GeocodingError> in
            do throws(GeocodingError) {
                let places = GazetteerPlaces(gazetteer: try GazetteerFile.load(path))
                HeapTrim.giveBackFreedMemory()
                return .success(places)
            } catch {
                return .failure(error)
            }
        }
        return loaded ?? .failure(.dataNotLoaded("the agent stopped while the gazetteer was loading"))
    }
}
