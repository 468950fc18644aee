import AgentFormats
import Foundation
import GeofenceCore

/// OwnTracks' JSON (the booklet's `docs/tech/json.md`), so that OwnTracks Recorder, its frontends and the
/// apps see the vehicle as one of theirs. Pure: values in, payload bytes out. Our own topics stay as
/// they are; these are published beside them (docs/integrations.md).
package enum OwnTracks {
    /// Who the vehicle is to OwnTracks: `owntracks/USER/DEVICE`, shown by its two-character tracker id.
    package struct Identity: Sendable, Equatable {
        package var prefix: String
        package var user: String
        package var device: String
        package var tid: String

        package init(prefix: String = "owntracks", user: String, device: String, tid: String? = nil) {
            self.prefix = prefix
            self.user = user
            self.device = device
            self.tid = tid ?? Self.defaultTrackerID(device)
        }

        /// The booklet's default is the topic's last two characters; letters and digits only here, so that
        /// `vehicle-1` shows as `e1` rather than `-1`.
        static func defaultTrackerID(_ device: String) -> String {
            let shown = device.filter { $0.isLetter || $0.isNumber }
            return String((shown.isEmpty ? device : shown).suffix(2))
        }

        /// Locations and the will (`_type` location and lwt).
        package var base: String { "\(prefix)/\(user)/\(device)" }
        /// Transitions.
        package var event: String { "\(base)/event" }
        /// Commands to the vehicle.
        package var command: String { "\(base)/cmd" }
        /// The regions, on request.
        package var waypoints: String { "\(base)/waypoints" }
    }

    /// Why a location was published (`t`).
    package enum Trigger: String, Sendable {
        /// A live update (the booklet's ping: automatic).
        case ping = "p"
        /// An answer to `reportLocation`.
        case response = "r"
        /// Published with a region's transition.
        case region = "c"
    }

    /// A region the vehicle is inside: its identifier (`inrids`) and name (`inregions`).
    package struct Region: Sendable, Equatable {
        package var identifier: String
        package var name: String?
        package init(identifier: String, name: String?) {
            self.identifier = identifier
            self.name = name
        }
    }

    /// `_type: location`. Integers where the booklet has them: `tst` and `created_at` in epoch seconds,
    /// `acc`, `alt` and `vac` in metres, `vel` in km/h, `cog` in degrees. A value the receiver did not give
    /// is left out, as the apps do.
    package static func location(_ l: Location, identity: Identity, trigger: Trigger, inside: [Region], createdAt: Date)
        -> [UInt8]
    {
        var line = JSONLine()
        line.add("_type", "location")
        line.add("lat", l.coordinate.latitude)
        line.add("lon", l.coordinate.longitude)
        line.add("tst", epochSeconds(l.gpsTime ?? l.timestamp))
        if l.horizontalAccuracy > 0 { line.add("acc", Int(l.horizontalAccuracy.rounded())) }
        if let altitude = l.altitudeMSL, altitude.isFinite {
            line.add("alt", Int(altitude.rounded()))
            if l.verticalAccuracy > 0 { line.add("vac", Int(l.verticalAccuracy.rounded())) }
        }
        if l.speed >= 0 { line.add("vel", Int((l.speed * 3.6).rounded())) }
        if l.course >= 0 { line.add("cog", Int(l.course.rounded()) % 360) }
        line.add("tid", identity.tid)
        line.add("t", trigger.rawValue)
        line.add("inregions", strings: inside.map { $0.name ?? $0.identifier })
        line.add("inrids", strings: inside.map(\.identifier))
        line.add("created_at", epochSeconds(createdAt))
        return Array(line.text.utf8)
    }

    /// `_type: transition` for an `enter` or `exit` (OwnTracks' `leave`); nil for any other event, which
    /// OwnTracks consumers reject. Every field Recorder needs is there (it fails on a transition without
    /// `event` or `desc`). `wtst` is the region's own time: its `properties.version` (a region imported
    /// with `setWaypoints` keeps the waypoint's `tst` there), 0 when it has none.
    package static func transition(_ e: MonitorEvent, identity: Identity, waypointTime: Int64?, createdAt: Date)
        -> [UInt8]?
    {
        let event: String
        switch e.kind {
        case .enter: event = "enter"
        case .exit: event = "leave"
        default: return nil
        }
        var line = JSONLine()
        line.add("_type", "transition")
        line.add("wtst", Int(waypointTime ?? 0))
        line.add("tst", epochSeconds(e.location.gpsTime ?? e.date))
        line.add("lat", e.location.coordinate.latitude)
        line.add("lon", e.location.coordinate.longitude)
        line.add("acc", Int(max(e.location.horizontalAccuracy, 0).rounded()))
        line.add("tid", identity.tid)
        line.add("event", event)
        line.add("desc", e.conditionName ?? e.identifier)
        line.add("t", "c")
        line.add("rid", e.identifier)
        line.add("created_at", epochSeconds(createdAt))
        return Array(line.text.utf8)
    }

    /// `_type: lwt`, the will: `tst` is when the connection was made.
    package static func lastWill(connectedAt: Date) -> [UInt8] {
        var line = JSONLine()
        line.add("_type", "lwt")
        line.add("tst", epochSeconds(connectedAt))
        return Array(line.text.utf8)
    }

    /// A circular region in OwnTracks' terms (`_type: waypoint`).
    package struct Waypoint: Sendable, Equatable {
        package var description: String
        package var latitude: Double
        package var longitude: Double
        /// Metres.
        package var radius: Int
        /// Epoch seconds: when the region was made.
        package var time: Int64
        package var regionID: String?

        package init(
            description: String, latitude: Double, longitude: Double, radius: Int, time: Int64, regionID: String?
        ) {
            self.description = description
            self.latitude = latitude
            self.longitude = longitude
            self.radius = radius
            self.time = time
            self.regionID = regionID
        }

        var json: String {
            var line = JSONLine()
            line.add("_type", "waypoint")
            line.add("desc", description)
            line.add("lat", latitude)
            line.add("lon", longitude)
            line.add("rad", radius)
            line.add("tst", Int(time))
            line.add("rid", regionID)
            return line.text
        }
    }

    /// `_type: waypoints`: the vehicle's circles. Polygons and corridors have no OwnTracks form.
    package static func waypoints(_ list: [Waypoint]) -> [UInt8] {
        var line = JSONLine()
        line.add("_type", "waypoints")
        line.addRaw("waypoints", "[" + list.map(\.json).joined(separator: ",") + "]")
        return Array(line.text.utf8)
    }

    /// The waypoint for a circle condition; nil for a polygon or corridor.
    package static func waypoint(identifier: String, condition: Condition) -> Waypoint? {
        guard case .circle(let c) = condition.region else { return nil }
        return Waypoint(
            description: condition.name ?? identifier, latitude: c.center.latitude, longitude: c.center.longitude,
            radius: max(1, Int(c.radius.rounded())), time: condition.version ?? 0, regionID: identifier)
    }

    static func epochSeconds(_ date: Date) -> Int { Int(date.timeIntervalSince1970.rounded(.down)) }
}
