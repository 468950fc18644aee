import Foundation
import TestSupport
import Testing

@testable import AgentOutputs

/// The topics and the track payload against the vectors the dashboard's model is checked with too
/// (`Tests/Vectors/fleet-contract.json`, `Tests/JavaScript/fleet.test.js`): one contract, two readers.
@Suite(.offTheCooperativePool(.computing)) struct FleetContractVectorsTests {
    struct Vectors: Decodable {
        struct TopicVectors: Decodable {
            struct Geofence: Decodable {
                var id: String
                var topic: String
            }
            var prefix: String
            var fleet: String
            var vehicle: String
            var perVehicle: [String: String]
            var fleetGeofence: Geofence
            var vehicleGeofence: Geofence
            var fleetGeofences: String
            var vehicleGeofences: String
        }
        struct TrackVector: Decodable {
            struct Point: Decodable {
                var t: Int
                var lat: Int
                var lon: Int
                var acc: Int
                var speed: Int
                var course: Int
                var stationary: Bool
                var excursion: Bool
            }
            var payload: String
            var sequence: Int64
            var vehicle: String
            var points: [Point]
        }
        var topics: TopicVectors
        var track: [TrackVector]
    }

    static let vectors: Vectors = {
        let url = Repository.url("Tests/Vectors/fleet-contract.json")
        return try! JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }()

    @Test func theTopicsAreTheVectors() {
        let v = Self.vectors.topics
        let topics = Topics(prefix: v.prefix, fleet: v.fleet, vehicle: v.vehicle)
        let made: [String: String] = [
            "events": topics.events, "location": topics.location, "track": topics.track, "status": topics.status,
            "state": topics.state, "errors": topics.errors, "trips": topics.trips, "stateDetail": topics.stateDetail,
            "command": topics.command, "probe": topics.probe,
        ]
        #expect(made == v.perVehicle)
        #expect(topics.fleetGeofence(v.fleetGeofence.id) == v.fleetGeofence.topic)
        #expect(topics.vehicleGeofence(v.vehicleGeofence.id) == v.vehicleGeofence.topic)
        #expect(topics.fleetGeofences == v.fleetGeofences)
        #expect(topics.vehicleGeofences == v.vehicleGeofences)
    }

    @Test func theTrackEncodesToTheVectorsPayloadAndReadsBack() {
        for vector in Self.vectors.track {
            let points = vector.points.map { p in
                var point = TrackEncoding.Point(
                    time: Date(timeIntervalSince1970: Double(p.t) / 10), latitude: p.lat, longitude: p.lon,
                    accuracy: p.acc, speed: p.speed, course: p.course, stationary: p.stationary)
                point.excursion = p.excursion
                return point
            }
            let payload = TrackEncoding.encode(points, vehicle: vector.vehicle, sequence: vector.sequence)
            #expect(String(decoding: payload, as: UTF8.self) == vector.payload)
            let decoded = TrackEncoding.decode(Array(vector.payload.utf8))
            #expect(decoded?.sequence == vector.sequence)
            #expect(decoded?.vehicle == vector.vehicle)
            #expect(decoded?.points == points)
        }
    }
}
