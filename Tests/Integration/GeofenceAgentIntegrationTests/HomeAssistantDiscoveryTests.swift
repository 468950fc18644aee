import AgentOutputs
import AgentTestSupport
import Foundation
import GeofenceAgent
import GeofenceCore
import LocalServers
import Logging
import Mosquitto
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Home Assistant's MQTT discovery, against its documentation (home-assistant.io, integrations
/// device_tracker.mqtt, event.mqtt, sensor.mqtt): each config's keys are ones the integration documents.
@Suite(.offTheCooperativePool(.computing)) struct HomeAssistantDiscoveryTests {
    static let topics = Topics(prefix: "fleet", fleet: "demo", vehicle: "vehicle-1")
    static let identity = HomeAssistant.Identity(topics: topics)
    /// The keys each documented component takes (the shared ones: unique_id, name, device, availability, icon, entity_category).
    static let shared: Set<String> = ["unique_id", "name", "device", "availability", "icon", "entity_category"]
    static let documented: [String: Set<String>] = [
        "device_tracker": shared.union(["json_attributes_topic", "source_type"]),
        "event": shared.union(["state_topic", "event_types"]),
        "sensor": shared.union([
            "state_topic", "value_template", "state_class", "unit_of_measurement", "json_attributes_topic",
            "device_class",
        ]),
    ]

    func configs() throws -> [(topic: String, config: [String: Any])] {
        try HomeAssistant.discovery(Self.identity, version: "0.1.0").map { message in
            (
                message.topic,
                try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
            )
        }
    }

    @Test func theTripSensorsRenderTheirPayloadsAndNothingElse() throws {
        let all = try configs().map(\.config)
        let trip = try #require(all.first { $0["name"] as? String == "Trip" })
        let lastStop = try #require(all.first { $0["name"] as? String == "Last stop" })
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let stop = Stop(
            arrival: start, coordinate: Coordinate(latitude: 52, longitude: 5), horizontalAccuracy: 2,
            conditions: ["depot"])
        let driving = TripEvent.tripStarted(
            Trip(
                start: start, startCoordinate: stop.coordinate, distance: 512, maximumSpeed: 14, lastFix: start))
        func json(_ bytes: [UInt8]?) throws -> [String: Any] {
            let data = try #require(bytes)
            return try #require(try JSONSerialization.jsonObject(with: Data(data)) as? [String: Any])
        }
        let template = { (config: [String: Any]) in config["value_template"] as! String }
        #expect(try renderJinja(template(trip), valueJSON: json(HomeAssistant.tripState(driving))) == "driving")
        #expect(
            try renderJinja(template(trip), valueJSON: json(HomeAssistant.tripState(.stopStarted(stop)))) == "parked")
        #expect(
            try renderJinja(template(lastStop), valueJSON: json(HomeAssistant.lastStop(.stopStarted(stop))))
                == "2026-01-01T00:00:00.000Z")
        #expect(
            HomeAssistant.tripState(
                .tripEnded(
                    Trip(
                        start: start, startCoordinate: stop.coordinate, distance: 1, maximumSpeed: 1, lastFix: start)))
                == nil)
        // Whatever else reaches them renders to Home Assistant's "no value", touching no undefined key.
        for config in [trip, lastStop] {
            #expect(try renderJinja(template(config), valueJSON: ["status": "offline"]) == "None")
        }
    }

    @Test func oneDeviceWithATrackerAnEventEntityAndFiveSensors() throws {
        let all = try configs()
        #expect(
            all.map(\.topic) == [
                "homeassistant/device_tracker/vehicle-1/geofence_agent_demo_location/config",
                "homeassistant/event/vehicle-1/geofence_agent_demo_geofence/config",
                "homeassistant/sensor/vehicle-1/geofence_agent_demo_gps/config",
                "homeassistant/sensor/vehicle-1/geofence_agent_demo_outbox/config",
                "homeassistant/sensor/vehicle-1/geofence_agent_demo_satisfied/config",
                "homeassistant/sensor/vehicle-1/geofence_agent_demo_trip/config",
                "homeassistant/sensor/vehicle-1/geofence_agent_demo_last_stop/config",
            ])
        for (topic, config) in all {
            let component = topic.split(separator: "/")[1]
            #expect(
                Set(config.keys).isSubset(of: Self.documented[String(component)] ?? []),
                "\(topic): \(config.keys.sorted())")
            let device = try #require(config["device"] as? [String: Any])
            #expect(
                device["identifiers"] as? [String] == ["geofence_agent_demo_vehicle-1"]
                    && device["name"] as? String == "vehicle-1")
            let availability = try #require((config["availability"] as? [[String: Any]])?.first)
            #expect(
                availability["topic"] as? String == "fleet/demo/vehicles/vehicle-1/status"
                    && availability["value_template"] as? String == "{{ value_json.status }}")
        }
        let ids = all.compactMap { $0.config["unique_id"] as? String }
        #expect(Set(ids).count == 7 && ids.allSatisfy { $0.hasPrefix("geofence_agent_demo_vehicle-1_") })
        #expect(
            try configs().compactMap { $0.config["unique_id"] as? String } == ids, "stable: the same ids every time")

        let tracker = all[0].config
        #expect(
            tracker["source_type"] as? String == "gps"
                && tracker["json_attributes_topic"] as? String == Self.identity.attributes)
        #expect(
            tracker["state_topic"] == nil && tracker["payload_home"] == nil,
            "not the deprecated state_topic / payload_home")
        #expect(all[1].config["event_types"] as? [String] == ["enter", "exit", "dwell", "crossed"])
    }

    @Test func attributesAndEventsCarryWhatTheEntitiesRead() throws {
        let fix = Location(
            coordinate: Coordinate(latitude: 52.85, longitude: 5.31), horizontalAccuracy: 4.5, speed: 2.5,
            timestamp: Date(timeIntervalSince1970: 1_534_758_506))
        let a = try #require(
            try JSONSerialization.jsonObject(with: Data(HomeAssistant.attributes(fix, inside: ["channel", "route"])))
                as? [String: Any])
        #expect(
            a["latitude"] as? Double == 52.85 && a["longitude"] as? Double == 5.31
                && a["gps_accuracy"] as? Double == 4.5)
        #expect(a["inside"] as? [String] == ["channel", "route"] && a["speed"] as? Double == 9)
        for kind in [EventKind.enter, .exit, .dwell, .crossed] {
            let e = MonitorEvent(
                identifier: "channel", kind: kind, state: .satisfied, date: fix.timestamp, location: fix,
                conditionName: "Buoyed channel")
            let payload = try #require(HomeAssistant.event(e, monitor: "default"))
            let o = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
            #expect(
                o["event_type"] as? String == kind.rawValue && o["identifier"] as? String == "channel"
                    && o["name"] as? String == "Buoyed channel")
        }
        for kind in [EventKind.initial, .overspeed, .active] {
            let e = MonitorEvent(identifier: "x", kind: kind, state: .satisfied, date: fix.timestamp, location: fix)
            #expect(HomeAssistant.event(e, monitor: "default") == nil, "\(kind) is not one of the entity's event types")
        }
    }
}
