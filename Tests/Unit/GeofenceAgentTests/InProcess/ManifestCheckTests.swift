import AgentTesting
import Foundation
import GeofenceAgent
import GeofenceCore
import Mosquitto
import TestSupport
import Testing

/// A geofence set is confirmed against its manifest, not assumed: a geofence the broker lost is reported
/// on the status and on `errors`, and once it is published again the status says the set is confirmed.
@Suite(.offTheCooperativePool(.agentsPool)) struct ManifestCheckTests {
    static func feature(_ id: String, longitude: Double) -> String {
        #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(longitude),52]},"#
            + #""properties":{"radius":100}}"#
    }

    static let features = [
        "a": feature("a", longitude: 5), "b": feature("b", longitude: 6), "c": feature("c", longitude: 7),
    ]

    static func manifest(_ features: [String: String]) -> [UInt8] {
        GeofenceManifest(geofences: features.mapValues { GeofenceDigest.of(Array($0.utf8)) }).payload
    }

    /// The check waits 50 ms of quiet, not 2 s: the test's pushes arrive at once.
    static func settleQuickly(_ configuration: inout AgentConfiguration) { configuration.manifestSettleSeconds = 0.05 }

    /// The `geofenceSet` of the last status in `statuses`.
    static func geofenceSet(_ statuses: [MQTTMessage]) -> String? {
        statuses.last.flatMap { AgentInProcessTests.object($0)["geofenceSet"] as? String }
    }

    /// The `geofenceSet` of the last status published, once it starts with `prefix` (or the wait ends).
    static func geofenceSet(_ agent: TestAgent, startingWith prefix: String) async -> String? {
        geofenceSet(await agent.messages("status") { geofenceSet($0)?.hasPrefix(prefix) == true })
    }

    @Test func aLostGeofenceIsReportedAndConfirmedOncePublishedAgain() async throws {
        try await withTestAgent(configure: Self.settleQuickly) { agent in
            #expect(await Self.geofenceSet(agent, startingWith: "unconfirmed") == "unconfirmed: no manifest")
            // The broker kept a and b, and lost c; the manifest names all three.
            agent.push(geofence: "a", feature: Self.features["a"]!)
            agent.push(geofence: "b", feature: Self.features["b"]!)
            agent.broker.publish("fleet/test/manifests/geofences", payload: Self.manifest(Self.features), retain: true)
            let differs = await Self.geofenceSet(agent, startingWith: "differs")
            #expect(
                differs == "differs: 1 missing (c)")
            let errors = await agent.messages("errors") { !$0.isEmpty }.map(AgentInProcessTests.object)
            #expect(errors.first?["kind"] as? String == "manifest")
            #expect(errors.first?["topic"] as? String == "fleet/test/manifests/geofences")
            #expect((errors.first?["reason"] as? String)?.contains("1 missing (c)") == true, "\(errors)")

            agent.push(geofence: "c", feature: Self.features["c"]!)
            #expect(await Self.geofenceSet(agent, startingWith: "confirmed") == "confirmed: 3 geofences")
            #expect(agent.messages("errors").count == 1, "said once")
        }
    }

    @Test func aDeletionTheBrokerLostAndAnOtherPayloadAreReported() async throws {
        try await withTestAgent(configure: Self.settleQuickly) { agent in
            agent.push(geofence: "a", feature: Self.features["a"]!)
            agent.push(geofence: "b", feature: Self.feature("b", longitude: 6.5))
            #expect(await AgentInProcessTests.held(2, by: agent))
            agent.broker.publish(
                "fleet/test/manifests/geofences", payload: Self.manifest(["b": Self.features["b"]!]), retain: true)
            let differs = await Self.geofenceSet(agent, startingWith: "differs")
            #expect(differs == "differs: 1 different (b), 1 not in the manifest (a)")
        }
    }

    @Test func aBadManifestIsRefusedOnErrorsAndTheLastOneStays() async throws {
        try await withTestAgent(configure: Self.settleQuickly) { agent in
            agent.push(geofence: "a", feature: Self.features["a"]!)
            agent.broker.publish(
                "fleet/test/manifests/geofences", payload: Self.manifest(["a": Self.features["a"]!]), retain: true)
            #expect(await Self.geofenceSet(agent, startingWith: "confirmed") == "confirmed: 1 geofence")
            agent.broker.publish("fleet/test/manifests/geofences", text: #"{"type":"GeofenceManifest"}"#, retain: true)
            let errors = await agent.messages("errors") { !$0.isEmpty }.map(AgentInProcessTests.object)
            #expect((errors.first?["reason"] as? String)?.contains("$.geofences: expected an object") == true)
            #expect(await Self.geofenceSet(agent, startingWith: "confirmed") == "confirmed: 1 geofence")
        }
    }
}
