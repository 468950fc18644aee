import AgentTestSupport
import Foundation
import LocalServers
import Logging
import Mosquitto
import ReceiverSimulation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A national fleet's geofences through the real path: 100,000 retained on a real mosquitto, a bad one
/// among them, then deletions pushed live. Speed and memory are `geofence-bench sync`'s to measure; this
/// checks that everything arrives, every refusal is named and the state stays small.
@Suite(.serialized, .offTheCooperativePool(.waiting)) struct FleetSyncTests {
    @Test func oneHundredThousandRetainedGeofencesAreHeldAndTheStateStaysSmall() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let count = 100_000
        var geofences = FleetGeofences(count: count, seed: 5).geofences
        // One bad geofence in the middle: a latitude out of range.
        geofences[50_000].feature =
            #"{"type":"Feature","id":"\#(geofences[50_000].identifier)","geometry":{"type":"Point","coordinates":[10,95]},"properties":{"radius":50}}"#
        try await publishRetained(geofences, port: broker.port)

        let errors = try await EventSubscriber(port: broker.port, topic: "fleet/test/vehicles/v1/errors")
        let states = try await EventSubscriber(port: broker.port, topic: "fleet/test/vehicles/v1/state")
        // The drive goes on after its end (no `exitAtEnd`): a sync slowed by a busy machine must not outlast
        // the agent, which the replay's end (246 s at 5x) would otherwise stop before the live deletions.
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 5) {
            $0["conditions"] = nil
            var replay = $0["replay"] as? [String: Any] ?? [:]
            replay["exitAtEnd"] = false
            $0["replay"] = replay
        }
        try agent.start()
        defer { agent.kill(signal: SIGTERM) }
        #expect(
            await waitUntil(300) { (agent.status?["conditions"] as? Int ?? 0) == count - 1 },
            "every good geofence is held: \(agent.status?["conditions"] ?? "none")")
        #expect(await waitUntil(60) { errors.count >= 1 })
        let refusal = try #require(errors.events.first)
        #expect(
            refusal["identifier"] as? String == geofences[50_000].identifier && refusal["kind"] as? String == "geofence"
        )
        #expect((refusal["reason"] as? String)?.contains("latitude 95") == true, "\(refusal)")

        // Deletions pushed live reach it too.
        #expect(!agent.waitForExit(within: 0), "the agent still runs when the deletions are pushed")
        try await publishRetained(
            geofences.prefix(10).map { FleetGeofences.Geofence(identifier: $0.identifier, feature: "") },
            port: broker.port)
        #expect(await waitUntil(60) { (agent.status?["conditions"] as? Int ?? 0) == count - 11 })
        #expect(await waitUntil(60) { (states.events.last?["conditions"] as? Int) == count - 11 }, "the state follows")
        await states.stop()
        await errors.stop()
        let largest = states.sizes.max() ?? 0
        #expect(
            largest > 0 && largest <= 64 * 1024, "every state message fits in 64 KB: the largest was \(largest) bytes")
        print(
            "fleet sync: \(count) retained, \(count - 1) held, 1 refused by name, 10 deleted live; largest state message \(largest) bytes"
        )
    }
}
