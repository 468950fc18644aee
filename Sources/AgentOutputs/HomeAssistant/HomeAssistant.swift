import AgentFormats
import Foundation
import GeofenceCore

/// Home Assistant's MQTT discovery (home-assistant.io, integrations/mqtt): the vehicle appears as one
/// device with a GPS tracker, an event entity and five sensors, with no configuration in Home Assistant.
/// Pure: values in, topics and payloads out.
package enum HomeAssistant {
    /// The event types of the event entity; other events have no place there.
    package static let eventTypes = ["enter", "exit", "dwell", "crossed"]

    /// Where the vehicle's entities live.
    package struct Identity: Sendable, Equatable {
        package var discoveryPrefix: String
        package var topics: Topics

        package init(discoveryPrefix: String = "homeassistant", topics: Topics) {
            self.discoveryPrefix = discoveryPrefix
            self.topics = topics
        }

        /// The device's id, stable across restarts: `geofence_agent_FLEET_VEHICLE` in the characters
        /// discovery allows. Each entity's `unique_id` is this and its role.
        package var node: String { Self.allowed("geofence_agent_\(topics.fleet)_\(topics.vehicle)") }

        static func allowed(_ raw: String) -> String {
            let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
            return String(raw.unicodeScalars.map { allowed.contains($0) ? Character($0) : "_" })
        }

        /// Home Assistant's own status: `online` when it (re)starts, and the discovery goes again.
        package var homeAssistantStatus: String { "\(discoveryPrefix)/status" }
        /// The tracker's attributes: latitude, longitude, gps_accuracy and the conditions the vehicle is inside.
        package var attributes: String { "\(topics.vehicleBase)/homeassistant/attributes" }
        /// The event entity's events.
        package var events: String { "\(topics.vehicleBase)/homeassistant/event" }
        /// The trip sensor's state: driving or parked, with the trip or stop as attributes (retained).
        package var trip: String { "\(topics.vehicleBase)/homeassistant/trip" }
        /// The last stop sensor's state: its arrival, with the stop as attributes (retained).
        package var lastStop: String { "\(topics.vehicleBase)/homeassistant/laststop" }

        /// `PREFIX/COMPONENT/VEHICLE/geofence_agent_FLEET_ROLE/config`: the vehicle is a level of its own, so
        /// that a broker's ACL can give each vehicle its own discovery topics (`homeassistant/+/%u/+/config`).
        func configTopic(_ component: String, _ role: String) -> String {
            "\(discoveryPrefix)/\(component)/\(Self.allowed(topics.vehicle))/\(Self.allowed("geofence_agent_\(topics.fleet)_\(role)"))/config"
        }
    }

    /// Every discovery message: (topic, retained payload). Every entity shares the device block and has
    /// a `unique_id` made of the node id and its role, so it stays the same entity across restarts.
    package static func discovery(_ identity: Identity, version: String) -> [(topic: String, payload: [UInt8])] {
        let node = identity.node
        let device: [String: Any] = [
            "identifiers": [node], "name": identity.topics.vehicle, "manufacturer": "geofence-agent",
            "model": "geofence-agent (fleet \(identity.topics.fleet))", "sw_version": version,
        ]
        // Available while the vehicle's own status says `online` (its will says `offline`).
        let availability: [[String: Any]] = [
            ["topic": identity.topics.status, "value_template": "{{ value_json.status }}"]
        ]
        func entity(_ role: String, _ name: String, _ keys: [String: Any]) -> [String: Any] {
            keys.merging(["unique_id": "\(node)_\(role)", "name": name, "device": device, "availability": availability])
            { a, _ in a }
        }
        let entities: [(component: String, object: String, config: [String: Any])] = [
            // Location from the attributes alone: no `state_topic`, no `payload_home`; the zone comes from the
            // coordinates.
            (
                "device_tracker", "location",
                entity(
                    "location", "Location",
                    [
                        "json_attributes_topic": identity.attributes, "source_type": "gps", "icon": "mdi:map-marker",
                    ])
            ),
            (
                "event", "geofence",
                entity(
                    "geofence", "Geofence event",
                    [
                        "state_topic": identity.events, "event_types": eventTypes, "icon": "mdi:map-marker-radius",
                    ])
            ),
            (
                "sensor", "gps",
                entity(
                    "gps", "GPS",
                    [
                        "state_topic": identity.topics.status,
                        "value_template": statusTemplate("gps.state", key: "gps"),
                        "icon": "mdi:crosshairs-gps",
                        "entity_category": "diagnostic",
                    ])
            ),
            (
                "sensor", "outbox",
                entity(
                    "outbox", "Outbox depth",
                    [
                        "state_topic": identity.topics.status,
                        "value_template": statusTemplate("outbox.rows", key: "outbox"),
                        "state_class": "measurement",
                        "unit_of_measurement": "messages", "icon": "mdi:tray-full", "entity_category": "diagnostic",
                    ])
            ),
            (
                "sensor", "satisfied",
                entity(
                    "satisfied", "Conditions inside",
                    [
                        "state_topic": identity.topics.status,
                        "value_template": statusTemplate("monitors | sum(attribute='satisfied')", key: "monitors"),
                        "state_class": "measurement", "icon": "mdi:vector-polygon",
                    ])
            ),
            (
                "sensor", "trip",
                entity(
                    "trip", "Trip",
                    [
                        "state_topic": identity.trip, "json_attributes_topic": identity.trip,
                        "value_template": "{{ value_json.state if value_json.state is defined else None }}",
                        "icon": "mdi:car-clock",
                    ])
            ),
            (
                "sensor", "last_stop",
                entity(
                    "last_stop", "Last stop",
                    [
                        "state_topic": identity.lastStop, "json_attributes_topic": identity.lastStop,
                        "value_template": "{{ value_json.arrival if value_json.arrival is defined else None }}",
                        "device_class": "timestamp", "icon": "mdi:map-marker-check",
                    ])
            ),
        ]
        return entities.map { e in
            (
                identity.configTopic(e.component, e.object),
                Array((try? JSONSerialization.data(withJSONObject: e.config, options: [.sortedKeys])) ?? Data())
            )
        }
    }

    /// A sensor's template on the status topic: `value_json.EXPRESSION` while the status has `key`, else
    /// `None` (Home Assistant's "no value"). The will and a stop's status say only `offline`: a bare
    /// `value_json.gps.state` would make Home Assistant log an error for each.
    package static func statusTemplate(_ expression: String, key: String) -> String {
        "{{ value_json.\(expression) if value_json.\(key) is defined else None }}"
    }

    /// The tracker's attributes: where the vehicle is (`gps_accuracy` in metres, 1-sigma) and which
    /// conditions it is inside.
    package static func attributes(_ l: Location, inside: [String]) -> [UInt8] {
        var line = JSONLine()
        line.add("latitude", l.coordinate.latitude)
        line.add("longitude", l.coordinate.longitude)
        if l.horizontalAccuracy > 0 { line.add("gps_accuracy", l.horizontalAccuracy) }
        if l.speed >= 0 { line.add("speed", (l.speed * 3.6 * 10).rounded() / 10) }
        line.add("inside", strings: inside)
        line.add("time", iso8601(l.gpsTime ?? l.timestamp))
        return Array(line.text.utf8)
    }

    /// The trip sensor's payload after a trip event: `driving` with the trip (start, distance so far in
    /// metres, top speed in km/h), or `parked` with the stop; nil for the events that change neither.
    package static func tripState(_ event: TripEvent) -> [UInt8]? {
        var line = JSONLine()
        switch event {
        case .tripStarted(let t):
            line.add("state", "driving")
            line.add("since", iso8601(t.start))
            line.add("distance", (t.distance * 10).rounded() / 10)
        case .stopStarted(let s):
            line.add("state", "parked")
            line.add("since", iso8601(s.arrival))
            line.add("latitude", s.coordinate.latitude)
            line.add("longitude", s.coordinate.longitude)
            line.add("inside", strings: s.conditions)
        case .tripEnded, .stopEnded:
            return nil
        }
        return Array(line.text.utf8)
    }

    /// The last stop sensor's payload: when it began (and ended), where, and what the vehicle was in.
    package static func lastStop(_ event: TripEvent) -> [UInt8]? {
        let stop: Stop
        switch event {
        case .stopStarted(let s), .stopEnded(let s): stop = s
        case .tripStarted, .tripEnded: return nil
        }
        var line = JSONLine()
        line.add("arrival", iso8601(stop.arrival))
        line.add("departure", orNull: stop.departure.map(iso8601))
        line.add("latitude", stop.coordinate.latitude)
        line.add("longitude", stop.coordinate.longitude)
        line.add("inside", strings: stop.conditions)
        return Array(line.text.utf8)
    }

    /// One event for the event entity (`event_type` and the condition's identifier and name); nil for a
    /// kind the entity does not list.
    package static func event(_ e: MonitorEvent, monitor: String) -> [UInt8]? {
        guard eventTypes.contains(e.kind.rawValue) else { return nil }
        var line = JSONLine()
        line.add("event_type", e.kind.rawValue)
        line.add("identifier", e.identifier)
        line.add("name", e.conditionName ?? e.identifier)
        line.add("monitor", monitor)
        line.add("state", e.state.rawValue)
        line.add("time", iso8601(e.location.gpsTime ?? e.date))
        if let reason = e.reason { line.add("reason", reason.rawValue) }
        line.add("latitude", e.location.coordinate.latitude)
        line.add("longitude", e.location.coordinate.longitude)
        return Array(line.text.utf8)
    }
}
