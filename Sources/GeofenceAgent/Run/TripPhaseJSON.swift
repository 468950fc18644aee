import Foundation
import GeofenceCore

/// The trip detector's phase as the store keeps it (a setting): JSON of `TripDetector.Phase`.
enum TripPhaseJSON {
    static func encode(_ phase: TripDetector.Phase) -> String {
        (try? String(decoding: JSONEncoder().encode(phase), as: UTF8.self)) ?? #"{"unknown":{}}"#
    }

    /// Nil for a value this version cannot read (the phase starts afresh).
    static func decode(_ text: String) -> TripDetector.Phase? {
        try? JSONDecoder().decode(TripDetector.Phase.self, from: Data(text.utf8))
    }
}
