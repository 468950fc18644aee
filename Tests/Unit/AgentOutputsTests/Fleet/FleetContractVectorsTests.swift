import Foundation
import TestSupport
import Testing

@testable import AgentOutputs

/// The topics and the track payload against the vectors the dashboard's model is checked with too
/// (`Tests/Vectors/fleet-contract.json`, `Tests/JavaScript/fleet.test.js`): one contract, two readers.
@Suite(.offTheCooperativePool(.computing)) struct FleetContractVectorsTests {
    /// The vectors file as JSON objects.
    static var vectors: [String: Any] {
        let data = try! Data(contentsOf: Repository.url("Tests/Vectors/fleet-contract.json"))
        return try! JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    @Test func theTopicsAreTheVectors() throws {
        let v = try #require(Self.vectors["topics"] as? [String: Any])
        let topics = Topics(
            prefix: try #require(v["prefix"] as? String), fleet: try #require(v["fleet"] as? String),
            vehicle: try #require(v["vehicle"] as? String))
        let made: [String: String] = [
            "events": topics.events, "location": topics.location, "track": topics.track, "status": topics.status,
            "state": topics.state, "errors": topics.errors, "trips": topics.trips, "stateDetail": topics.stateDetail,
            "command": topics.command, "probe": topics.probe,
        ]
        #expect(made == v["perVehicle"] as? [String: String])
        let fleetGeofence = try #require(v["fleetGeofence"] as? [String: String])
        let vehicleGeofence = try #require(v["vehicleGeofence"] as? [String: String])
        #expect(topics.fleetGeofence(fleetGeofence["id"]!) == fleetGeofence["topic"])
        #expect(topics.vehicleGeofence(vehicleGeofence["id"]!) == vehicleGeofence["topic"])
        #expect(topics.fleetGeofences == v["fleetGeofences"] as? String)
        #expect(topics.vehicleGeofences == v["vehicleGeofences"] as? String)
    }

    @Test func theTrackEncodesToTheVectorsPayloadAndReadsBack() throws {
        let batches = try #require(Self.vectors["track"] as? [[String: Any]])
        #expect(batches.count == 3)
        for vector in batches {
            let payload = try #require(vector["payload"] as? String)
            let sequence = try #require((vector["sequence"] as? NSNumber)?.int64Value)
            let vehicle = try #require(vector["vehicle"] as? String)
            let points = try #require(vector["points"] as? [[String: Any]]).map { p in
                var point = TrackEncoding.Point(
                    time: Date(timeIntervalSince1970: Double(p["t"] as! Int) / 10), latitude: p["lat"] as! Int,
                    longitude: p["lon"] as! Int, accuracy: p["acc"] as! Int, speed: p["speed"] as! Int,
                    course: p["course"] as! Int, stationary: p["stationary"] as! Bool)
                point.excursion = p["excursion"] as! Bool
                return point
            }
            let encoded = TrackEncoding.encode(points, vehicle: vehicle, sequence: sequence)
            #expect(String(decoding: encoded, as: UTF8.self) == payload)
            let decoded = TrackEncoding.decode(Array(payload.utf8))
            #expect(decoded?.sequence == sequence)
            #expect(decoded?.vehicle == vehicle)
            #expect(decoded?.points == points)
        }
    }
}
