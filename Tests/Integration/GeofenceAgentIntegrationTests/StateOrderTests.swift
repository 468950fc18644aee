import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

/// A dashboard that follows `events` and the retained `state` on one connection sees each transition's
/// event before any state that holds it, and every state agrees with the events received before it
/// (docs/topics.md, "state": a transition's state goes out right behind the transition's event). Through the
/// real agent and a real mosquitto, over the synthetic drive.
@Suite(.offTheCooperativePool(.waiting)) struct StateOrderTests {
    @Test func noStateRunsAheadOfOrBehindTheTransitionsReceivedBeforeIt() async throws {
        let broker = try LocalMosquitto()
        try broker.start()
        defer { broker.stop() }
        let prefix = "fleet/test/vehicles/v1/"
        let dashboard = try await EventSubscriber(port: broker.port, topic: prefix + "+")
        // 50x: a fix every 25 ms, so transitions often come closer together than the state's 250 ms spacing.
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 50)
        let expected = try expectedTransitions(in: agent)
        try agent.start()
        #expect(agent.waitForExit(within: 120), "the drive should end")
        let eventTopic = prefix + "events"
        let stateTopic = prefix + "state"
        // Each event once, by its id: a redelivery (at least once) would tell the same state again.
        func events() -> Int {
            Set(dashboard.messages.filter { $0.topic == eventTopic }.map { $0.object?["eventId"] as? String }).count
        }
        #expect(await waitUntil(60) { events() >= expected.count })
        await dashboard.stop()

        // Per monitor, the conditions the events received so far leave satisfied.
        var inside: [String: Set<String>] = [:]
        var states = 0
        var disagreements: [String] = []
        // Only events and states: the other topics (the track's batches among them) are not read here.
        for (index, message) in dashboard.messages.enumerated() where [eventTopic, stateTopic].contains(message.topic) {
            let object = try #require(message.object, "message \(index) on \(message.topic) is not JSON")
            if message.topic == eventTopic {
                let monitor = try #require(object["monitor"] as? String)
                let identifier = try #require(object["identifier"] as? String)
                if try #require(object["state"] as? String) == "satisfied" {
                    inside[monitor, default: []].insert(identifier)
                } else {
                    inside[monitor, default: []].remove(identifier)
                }
            } else {
                states += 1
                let monitors = try #require(object["monitors"] as? [String: [String: Any]])
                for (name, summary) in monitors {
                    let held = Set((summary["inside"] as? [String: Any] ?? [:]).keys)
                    let byEvents = inside[name, default: []]
                    if held != byEvents {
                        disagreements.append(
                            "message \(index): state of \(name) holds \(held.sorted()), the events \(byEvents.sorted())"
                        )
                    }
                }
            }
        }
        #expect(events() == expected.count, "every transition once")
        // The drive has a transition every 5 s of its time on average: the state went out many times.
        #expect(states >= 20, "\(states) states received")
        #expect(disagreements.isEmpty, "\(disagreements.count) of \(states): \(disagreements.prefix(5))")
        print("state order: \(expected.count) transitions, \(states) states, \(disagreements.count) disagreements")
    }
}
