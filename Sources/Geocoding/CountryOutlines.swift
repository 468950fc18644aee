import Dispatch
import EveryCore
import GeofenceCore
import Synchronization

/// Natural Earth's country outlines, cut into pieces (an outer ring and its holes each), indexed to answer
/// which country holds a point.
///
/// The pieces are split by longitude into a west and an east set, built at once on two threads (the index's
/// cell masks are most of the gazetteer's load). A point asks only the sets whose longitudes reach it, and
/// the sets are stored properties, not array elements, so that asking copies neither.
struct CountryOutlines: Sendable {
    /// One half of the pieces: its index, each piece's country, and the unwrapped longitudes its boxes span.
    struct Half: Sendable {
        let set: ConditionSet
        let countries: [Int]
        let west: Double, east: Double

        init(_ pieces: ArraySlice<(region: Region, country: Int)>) {
            set = ConditionSet(pieces.map(\.region))
            countries = pieces.map(\.country)
            west = pieces.map(\.region.boundingBox.minLongitude).min() ?? 0
            east = pieces.map(\.region.boundingBox.maxLongitude).max() ?? -1
        }

        func reaches(_ longitude: Double) -> Bool {
            (longitude >= west && longitude <= east) || (longitude + 360 >= west && longitude + 360 <= east)
        }

        @inline(__always)
        func country(at point: PreparedPoint) -> Int? {
            guard reaches(point.coordinate.longitude) else { return nil }
            var found: Int?
            set.forEachContaining(point) { piece in
                if found == nil { found = countries[piece] }
            }
            return found
        }
    }

    let western: Half
    let eastern: Half

    var pieceCount: Int { western.countries.count + eastern.countries.count }

    init(pieces: [(region: Region, country: Int)]) {
        let byLongitude = pieces.sorted {
            ($0.region.boundingBox.minLongitude + $0.region.boundingBox.maxLongitude)
                < ($1.region.boundingBox.minLongitude + $1.region.boundingBox.maxLongitude)
        }
        let halves = [byLongitude[..<(byLongitude.count / 2)], byLongitude[(byLongitude.count / 2)...]]
        let built = Mutex<[Int: Half]>([:])
        OnEveryCore.perform(iterations: halves.count) { k in
            let half = Half(halves[k])
            built.withLock { $0[k] = half }
        }
        (western, eastern) = built.withLock { ($0[0]!, $0[1]!) }
    }

    /// The index of the country whose outline holds the point, if any.
    func country(at point: PreparedPoint) -> Int? {
        western.country(at: point) ?? eastern.country(at: point)
    }
}
