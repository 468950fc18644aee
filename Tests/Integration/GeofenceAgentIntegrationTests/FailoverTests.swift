import AgentTestSupport
import Foundation
import LocalServers
import Logging
import Mosquitto
import TestSupport
import Testing

@testable import GeofenceAgent

#if canImport(Glibc)
    import Glibc
#endif

/// `mqtt.hosts`: the agent moves to the next broker when its own is gone, and every transition still
/// reaches a subscriber on the other broker.
@Suite(.offTheCooperativePool(.waiting)) struct FailoverTests {
    /// Two mosquitto brokers bridged both ways over MQTT 5 (b connects to a); the agent publishes to a, a
    /// dashboard listens on b; a is stopped mid-drive.
    @Test func theAgentFailsOverBetweenBridgedBrokersAndNoTransitionIsLost() async throws {
        let a = try LocalMosquitto.started()
        defer { a.stop() }
        let b = try LocalMosquitto(
            settings: """
                allow_anonymous true
                connection to-a
                address 127.0.0.1:\(a.port)
                topic fleet/# both 1
                bridge_protocol_version mqttv50
                cleansession false
                restart_timeout 1
                """)
        try b.start()
        defer { b.stop() }
        try await failOverMidDrive(first: a.port, second: b.port, protocolVersion: .v5, geofenceSync: "ok") {
            a.stop()
        }
    }
}

/// Back-ends on a shared subscription (`$share/backend/...`): two instances split the events between
/// them, each event to one, none lost.
@Suite(.offTheCooperativePool(.waiting)) struct SharedSubscriptionTests {
    @Test func twoBackEndsSplitTheEventsWithNoneLost() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let filter = "$share/backend/fleet/+/vehicles/+/events"
        let first = try await EventSubscriber(port: broker.port, topic: filter)
        let second = try await EventSubscriber(port: broker.port, topic: filter)
        // The synthetic drive: 240 transitions at 40x.
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 40)
        defer { agent.kill(signal: SIGKILL) }
        let expected = try expectedTransitions(in: agent)
        try agent.start()
        #expect(
            await waitUntil(90) { Set(first.unique.map(eventID) + second.unique.map(eventID)).count >= expected.count },
            "\(first.count) + \(second.count) of \(expected.count)")
        let one = Set(first.unique.map(eventID))
        let two = Set(second.unique.map(eventID))
        #expect(one.union(two).count == expected.count, "none lost")
        #expect(one.isDisjoint(with: two), "each event to one back-end")
        #expect(
            one.count > expected.count / 4 && two.count > expected.count / 4,
            "both take a share: \(one.count) and \(two.count)")
        print(
            "shared subscription: \(expected.count) events, \(one.count) to the first back-end, \(two.count) to the second, \(one.intersection(two).count) to both"
        )
        for s in [first, second] { await s.stop() }
    }

    func eventID(_ event: [String: Any]) -> String { event["eventId"] as? String ?? "" }
}
