import AgentFormats
import AgentOutputs
import Foundation
import GeofenceAgent
import GeofenceCore

/// `geofence-agent simulate`: replays a GPX track through the monitors' state machine, as Xcode
/// replays a GPX file, and prints one JSON line per event.
package enum SimulateJob {
    /// The monitor that conditions without `properties.monitor` belong to.
    package static let defaultMonitor = MonitorSet.defaultMonitor

    package static func run(
        conditionsPath: String, trackPath: String, accuracy: Double,
        configuration: MonitorConfiguration = MonitorConfiguration(), limits: GeoJSONLimits = .default,
        trips: Bool = false, emit: (String) -> Void, warn: (String) -> Void
    ) throws(AgentError) {
        guard accuracy.isFinite, accuracy >= 0 else {
            throw AgentError("--accuracy must be a non-negative number of metres, got \(accuracy)")
        }
        let file = try ConditionFile.load(conditionsPath, limits: limits)
        file.errorLines.forEach(warn)
        let track = try GPXTrack.load(trackPath)
        if let untimed = track.first(where: { $0.time == nil }) {
            throw AgentError(
                "\(trackPath):\(untimed.line): track point has no <time>; simulate replays a track with times")
        }
        var monitors = MonitorSet(configuration: configuration)
        for d in file.definitions {
            monitors.add(d.condition, identifier: d.identifier, monitor: d.monitor ?? defaultMonitor)
        }
        var rejected: [FixRejection: Int] = [:]
        var eventCount = 0
        for (point, speed) in zip(track, track.speeds) {
            let location = Location(
                coordinate: Coordinate(latitude: point.latitude, longitude: point.longitude),
                altitudeHAE: point.elevation,
                horizontalAccuracy: accuracy, speed: speed, course: point.course ?? -1, timestamp: point.time!)
            // The agent's loop (MonitorSet): every monitor filters the same fixes alike, counted once.
            let result = monitors.process(location)
            if let reason = result.rejection { rejected[reason, default: 0] += 1 }
            // As the agent: events a condition's `notify` leaves out are not shown.
            for step in result.steps {
                for event in step.events where event.isNotified {
                    emit(line(for: event, monitor: step.monitor))
                    eventCount += 1
                }
            }
            if trips {
                for event in result.tripEvents { emit(TripPayloads.object(event).text) }
            }
        }
        let rejectedText =
            rejected.isEmpty
            ? "none rejected"
            : rejected.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }.joined(
                separator: ", ")
        warn(
            "simulate: \(track.count) fixes (\(rejectedText)), \(file.definitions.count) conditions, \(eventCount) events"
        )
        if !file.errors.isEmpty {
            throw AgentError(
                "\(file.errors.count) of \(file.errors.count + file.definitions.count) features were refused; the others were simulated",
                exitCode: 1)
        }
    }

    static func line(for event: MonitorEvent, monitor: String) -> String {
        var line = JSONLine()
        line.add("monitor", monitor)
        line.add("identifier", event.identifier)
        line.add("event", event.kind.rawValue)
        line.add("state", event.state.rawValue)
        line.add("time", iso8601(event.date))
        line.add("lat", event.location.coordinate.latitude)
        line.add("lon", event.location.coordinate.longitude)
        line.add("horizontalAccuracy", event.location.horizontalAccuracy)
        line.add("name", event.conditionName)
        if let reason = event.reason { line.add("reason", reason.rawValue) }
        if let o = event.overspeed { line.addRaw("overspeed", Payloads.overspeedObject(o)) }
        return line.text
    }
}
