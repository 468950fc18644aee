import AgentFormats
import AgentOutputs
import Foundation
import GeofenceCore
import Places

/// `geofence-agent trips`: replays a GPX track through the agent's loop and prints its trips and stops as
/// JSON lines (docs/trips.md), as the agent would publish them on `trips`.
package enum TripsJob {
    package static func run(
        trackPath: String, accuracy: Double, conditionsPath: String?, settings: TripSettings,
        places: (any PlaceFinding)?, limits: GeoJSONLimits = .default, emit: (String) -> Void,
        warn: (String) -> Void
    ) throws(AgentError) {
        guard accuracy.isFinite, accuracy >= 0 else {
            throw AgentError("--accuracy must be a non-negative number of metres, got \(accuracy)")
        }
        var configuration = MonitorConfiguration()
        configuration.trips = settings
        var monitors = MonitorSet(configuration: configuration)
        if let conditionsPath {
            let file = try ConditionFile.load(conditionsPath, limits: limits)
            file.errorLines.forEach(warn)
            for d in file.definitions {
                monitors.add(d.condition, identifier: d.identifier, monitor: d.monitor ?? MonitorSet.defaultMonitor)
            }
        }
        let track = try GPXTrack.load(trackPath)
        if let untimed = track.first(where: { $0.time == nil }) {
            throw AgentError("\(trackPath):\(untimed.line): track point has no <time>; trips need a track with times")
        }
        var count = 0
        for location in locations(track, accuracy: accuracy) {
            for event in monitors.process(location).tripEvents {
                emit(TripPayloads.object(event, places: places).text)
                count += 1
            }
        }
        let phase: String
        switch monitors.trips.phase {
        case .unknown: phase = "neither a trip nor a stop recognised yet"
        case .parked: phase = "parked at the end"
        case .driving: phase = "still on a trip at the end"
        }
        warn("trips: \(track.count) fixes, \(count) trip and stop events, \(phase)")
    }

    /// The track's points as fixes with the speed and course a receiver gives (from the GPX, or from the
    /// positions when it has none).
    static func locations(_ track: [GPXPoint], accuracy: Double) -> [Location] {
        zip(track, track.speeds).map { point, speed in
            Location(
                coordinate: Coordinate(latitude: point.latitude, longitude: point.longitude),
                altitudeHAE: point.elevation, horizontalAccuracy: accuracy, speed: speed, course: point.course ?? -1,
                timestamp: point.time!)
        }
    }
}
