import AgentFormats
import Foundation
import GeofenceCore
import Places

/// A trip or stop event as one JSON object (docs/trips.md): the `trips` topic's payload and the lines of
/// `geofence-agent trips` and `simulate --trips`.
///
///     {"event":"tripEnded","time":"…","trip":{"start":"…","end":"…","startLat":…,"startLon":…,"endLat":…,
///      "endLon":…,"distance":5230.4,"duration":812.0,"maximumSpeed":62.3,"meanSpeed":23.2}}
///     {"event":"stopStarted","time":"…","stop":{"arrival":"…","departure":null,"lat":…,"lon":…,
///      "horizontalAccuracy":1.9,"duration":null,"conditions":["depot"]}}
///
/// Distances in metres, durations in seconds, speeds in km/h (as `overspeed`), times on the vehicle's
/// timeline (GPS time).
package enum TripPayloads {
    /// The `trips` topic's payload: the event's object with the outbox's stamp and the vehicle.
    package static func message(
        _ event: TripEvent, fleet: String, vehicle: String, eventID: String, sequence: Int64,
        places: (any PlaceFinding)?
    ) -> [UInt8] {
        var line = Payloads.stamped(eventID: eventID, sequence: sequence, fleet: fleet, vehicle: vehicle)
        line.append(object(event, places: places))
        return Array(line.text.utf8)
    }

    /// The event's object; `places` names the trip's ends or the stop's place when given.
    package static func object(_ event: TripEvent, places: (any PlaceFinding)? = nil) -> JSONLine {
        var line = JSONLine()
        line.add("event", event.name)
        line.add("time", iso8601(event.date))
        switch event {
        case .tripStarted(let trip), .tripEnded(let trip):
            line.addRaw("trip", tripObject(trip))
            if let places {
                line.addRaw("startPlace", places.place(at: trip.startCoordinate)?.json ?? "null")
                if let end = trip.endCoordinate { line.addRaw("endPlace", places.place(at: end)?.json ?? "null") }
            }
        case .stopStarted(let stop), .stopEnded(let stop):
            line.addRaw("stop", stopObject(stop))
            if let places { line.addRaw("place", places.place(at: stop.coordinate)?.json ?? "null") }
        }
        return line
    }

    static func tripObject(_ t: Trip) -> String {
        var line = JSONLine()
        line.add("start", iso8601(t.start))
        line.add("end", orNull: t.end.map(iso8601))
        line.add("startLat", t.startCoordinate.latitude)
        line.add("startLon", t.startCoordinate.longitude)
        line.add("endLat", orNull: t.endCoordinate?.latitude)
        line.add("endLon", orNull: t.endCoordinate?.longitude)
        line.add("distance", (t.distance * 10).rounded() / 10)
        line.add("duration", (t.duration * 1000).rounded() / 1000)
        line.add("maximumSpeed", (t.maximumSpeed * 36).rounded() / 10)
        line.add("meanSpeed", (t.meanSpeed * 36).rounded() / 10)
        return line.text
    }

    static func stopObject(_ s: Stop) -> String {
        var line = JSONLine()
        line.add("arrival", iso8601(s.arrival))
        line.add("departure", orNull: s.departure.map(iso8601))
        line.add("lat", s.coordinate.latitude)
        line.add("lon", s.coordinate.longitude)
        line.add("horizontalAccuracy", (s.horizontalAccuracy * 10).rounded() / 10)
        line.add("duration", orNull: s.departure.map { ($0.timeIntervalSince(s.arrival) * 1000).rounded() / 1000 })
        line.add("conditions", strings: s.conditions)
        return line.text
    }
}
