import AgentOutputs
import FleetSimulation
import Foundation
import GeofenceCore
import TestSupport
import Testing

/// The simulated fleet speaks the agent's own schema: its messages decode with the agent's decoders and
/// satisfy the topic contract (docs/topics.md), and its events follow the geometry.
@Suite(.offTheCooperativePool(.computing)) struct FleetSimulationTests {
    static func run(_ fleet: inout SimulatedFleet, seconds: Int) -> [SimulatedFleet.Message] {
        var messages: [SimulatedFleet.Message] = []
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        for k in 0..<(seconds * 10) {
            messages += fleet.tick(slot: k % 10, of: 10, at: start.addingTimeInterval(Double(k) / 10))
        }
        return messages
    }

    static func object(_ bytes: [UInt8]) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    @Test func everyVehiclePublishesWhatTheAgentPublishes() throws {
        var fleet = SimulatedFleet(settings: FleetSimulationSettings(vehicles: 50, geofences: 2000))
        let geofences = fleet.geofenceMessages()
        #expect(geofences.count == 2000 && geofences.allSatisfy(\.retain))
        let load = GeoJSONConditions.decode(geofences[0].payload)
        #expect(load.errors.isEmpty && load.definitions.count == 1, "a geofence the agent takes")
        let messages = Self.run(&fleet, seconds: 120)
        var byTopic: [String: [SimulatedFleet.Message]] = [:]
        for m in messages { byTopic[String(m.topic.split(separator: "/").last!), default: []].append(m) }

        // Every second a track point for each moving vehicle, each a whole batch the agent's decoder reads.
        let tracks = try #require(byTopic["track"])
        #expect(tracks.count > 50 * 100, "\(tracks.count) track messages in 120 s for 50 vehicles")
        var sequences: [String: Int64] = [:]
        for m in tracks {
            let batch = try #require(TrackEncoding.decode(m.payload))
            // One fix a batch; two when the vehicle stops (the stop goes at once, with the batch in progress).
            #expect(batch.points.count == 1 || (batch.points.count == 2 && batch.points[1].stationary))
            #expect(m.topic.hasSuffix("/vehicles/\(batch.vehicle)/track"))
            #expect(batch.sequence > sequences[batch.vehicle, default: 0], "sequences grow per vehicle")
            sequences[batch.vehicle] = batch.sequence
        }
        // Status every minute, retained, and online; state at the first fix; location retained.
        let statuses = try #require(byTopic["status"])
        #expect(statuses.count == 50 * 2 && statuses.allSatisfy(\.retain))
        let status = try #require(Self.object(statuses[0].payload))
        #expect(status["status"] as? String == "online" && status["heartbeatSeconds"] as? Double == 60)
        #expect((status["gps"] as? [String: Any])?["state"] as? String == "fix")
        #expect(byTopic["location"]?.allSatisfy(\.retain) == true && (byTopic["location"]?.count ?? 0) >= 50)
        #expect(byTopic["state"]?.allSatisfy(\.retain) == true && (byTopic["state"]?.count ?? 0) >= 50)

        // Events: an enter and its exit alternate per vehicle and geofence, and each names a real geofence the
        // fix is inside (enter) or outside (exit).
        let events = try #require(byTopic["events"])
        #expect(!events.isEmpty, "vehicles crossed geofences")
        let regions = Dictionary(
            uniqueKeysWithValues: geofences.compactMap { g -> (String, Region)? in
                guard let d = GeoJSONConditions.decode(g.payload).definitions.first else { return nil }
                return (d.identifier, d.condition.region)
            })
        var inside: Set<String> = []
        var ids: Set<String> = []
        for m in events {
            let o = try #require(Self.object(m.payload))
            let vehicle = try #require(o["vehicle"] as? String)
            let identifier = try #require(o["identifier"] as? String)
            let location = try #require(o["location"] as? [String: Any])
            let point = Coordinate(latitude: location["lat"] as! Double, longitude: location["lon"] as! Double)
            let region = try #require(regions[identifier])
            let key = "\(vehicle) \(identifier)"
            switch o["event"] as? String {
            case "enter":
                #expect(!inside.contains(key) && region.contains(PreparedPoint(point)))
                inside.insert(key)
            case "exit":
                #expect(inside.contains(key) && !region.contains(PreparedPoint(point)))
                inside.remove(key)
            default: Issue.record("an event the simulator does not make: \(o)")
            }
            #expect(ids.insert(try #require(o["eventId"] as? String)).inserted)
        }
    }

    @Test func theFleetIsTheSameForASeed() {
        var a = SimulatedFleet(settings: FleetSimulationSettings(vehicles: 20, geofences: 100))
        var b = SimulatedFleet(settings: FleetSimulationSettings(vehicles: 20, geofences: 100))
        _ = Self.run(&a, seconds: 30)
        _ = Self.run(&b, seconds: 30)
        #expect((0..<20).allSatisfy { a.position(of: $0) == b.position(of: $0) })
        #expect(a.geofences.map(\.feature) == b.geofences.map(\.feature))
    }

    @Test func vehiclesStayInTheirSquare() {
        // A 5 km square: in 10 minutes at 8 to 30 m/s the vehicles reach its edge and turn back.
        var settings = FleetSimulationSettings(vehicles: 20, geofences: 10)
        settings.side = 5_000
        var fleet = SimulatedFleet(settings: settings)
        var farthest = 0.0
        for _ in 0..<600 {
            _ = Self.run(&fleet, seconds: 1)
            for k in 0..<20 {
                let p = fleet.position(of: k)
                let north = abs(p.latitude - settings.centre.latitude) * 111_320
                let east =
                    abs(p.longitude - settings.centre.longitude) * 111_320
                    * cos(settings.centre.latitude * .pi / 180)
                #expect(max(north, east) <= settings.side / 2 + 1, "v\(k + 1) at \(p)")
                farthest = max(farthest, north, east)
            }
        }
        #expect(farthest > settings.side / 2 - 100, "the vehicles reached the edge: \(farthest) m")
    }
}
