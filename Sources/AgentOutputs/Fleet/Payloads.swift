import AgentFormats
import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import Places

/// The JSON payloads of the topic contract (docs/topics.md). Keys keep their order for people reading
/// `mosquitto_sub`; consumers must not depend on it.
public enum Payloads {
    /// A transition or dwell on `.../events`. `eventId` is unique; `sequence` grows per vehicle and never
    /// repeats, so a consumer drops duplicates after a redelivery by either.
    /// `place`: nil leaves the key out (places are off); `.some(nil)` writes null (no answer).
    public static func event(
        _ event: MonitorEvent, monitor: String, fleet: String, vehicle: String, eventID: String, sequence: Int64,
        place: PlaceSummary?? = nil
    ) -> [UInt8] {
        var line = stamped(eventID: eventID, sequence: sequence, fleet: fleet, vehicle: vehicle)
        line.add("monitor", monitor)
        line.add("identifier", event.identifier)
        line.add("event", event.kind.rawValue)
        line.add("state", event.state.rawValue)
        line.add("time", iso8601(event.date))
        line.add("name", orNull: event.conditionName)
        if let reason = event.reason { line.add("reason", reason.rawValue) }
        if let o = event.overspeed { line.addRaw("overspeed", overspeedObject(o)) }
        line.addRaw("location", locationObject(event.location))
        addPlace(place, to: &line)
        return Array(line.text.utf8)
    }

    static func addPlace(_ place: PlaceSummary??, to line: inout JSONLine) {
        guard let place else { return }
        line.addRaw("place", place?.json ?? "null")
    }

    /// The members every outbox message of ours begins with: its `eventId` and `sequence`, and whose it is.
    package static func stamped(eventID: String, sequence: Int64, fleet: String, vehicle: String) -> JSONLine {
        var line = JSONLine()
        line.add("eventId", eventID)
        line.add("sequence", Int(sequence))
        line.add("fleet", fleet)
        line.add("vehicle", vehicle)
        return line
    }

    /// A live update on `.../location` (retained: the latest).
    public static func location(
        _ update: LiveUpdate, fleet: String, vehicle: String, eventID: String, sequence: Int64,
        place: PlaceSummary?? = nil
    ) -> [UInt8] {
        var line = stamped(eventID: eventID, sequence: sequence, fleet: fleet, vehicle: vehicle)
        line.add("time", iso8601(update.location.timestamp))
        line.add("isStationary", update.isStationary)
        line.addRaw("location", locationObject(update.location))
        addPlace(place, to: &line)
        return Array(line.text.utf8)
    }

    /// Speeds in km/h, rounded to 0.1; duration in seconds and distance in metres, on `overspeedEnded`.
    package static func overspeedObject(_ o: OverspeedDetail) -> String {
        var line = JSONLine()
        line.add("limit", o.limit)
        line.add("peakSpeed", (o.peakSpeed * 10).rounded() / 10)
        line.add("meanSpeed", (o.meanSpeed * 10).rounded() / 10)
        if let duration = o.duration { line.add("duration", (duration * 1000).rounded() / 1000) }
        if let distance = o.distance { line.add("distance", distance.rounded()) }
        return line.text
    }

    package static func locationObject(_ l: Location) -> String {
        var line = JSONLine()
        line.add("lat", l.coordinate.latitude)
        line.add("lon", l.coordinate.longitude)
        line.add("horizontalAccuracy", orNull: l.horizontalAccuracy, negativeIsUnknown: true)
        line.add("speed", orNull: l.speed, negativeIsUnknown: true)
        line.add("course", orNull: l.course, negativeIsUnknown: true)
        line.add("gpsTime", orNull: l.gpsTime.map(iso8601))
        // The motion check's verdict (docs/monitoring.md#multipath), when it judged the fix.
        if let verdict = l.motionVerdict { line.add("motion", verdict.rawValue) }
        return line.text
    }

    /// What an error on `.../errors` is about.
    public enum ErrorKind: String, Sendable {
        /// A geofence pushed over MQTT was refused; the previous version stays in force.
        case geofence
        /// A message on `cmd` was refused.
        case command
        /// A change left by `geofence-agent conditions add/remove` was refused.
        case local
        /// The store could not record something (a full disk); what is kept and retried is said in `reason`.
        case store
        /// The broker cannot do what the agent needs (retained geofences to a wildcard subscription).
        case broker
        /// The geofences held differ from their set's manifest (missing, different or deleted ones).
        case manifest
    }

    /// A refused definition or command, or a store failure, on `.../errors`.
    public static func error(kind: ErrorKind, topic: String, identifier: String?, reason: String, vehicle: String)
        -> [UInt8]
    {
        var line = JSONLine()
        line.add("time", iso8601(Date()))
        line.add("vehicle", vehicle)
        line.add("kind", kind.rawValue)
        line.add("topic", topic)
        line.add("identifier", orNull: identifier)
        line.add("reason", reason)
        return Array(line.text.utf8)
    }
}
