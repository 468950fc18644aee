import AgentJobs
import AgentTestSupport
import AgentTesting
import Foundation
import Mosquitto
import TestSupport
import Testing

@testable import GeofenceAgent

/// A dashboard that follows `events` and the retained `state` sees each transition's event before any
/// state that holds it, and every state agrees with the events sent before it (docs/topics.md, "state": a
/// transition's state goes out right behind the transition's event). The whole agent in process over the
/// synthetic drive, replayed at 100x: the broker records what the agent sent, in the order it sent it.
@Suite(.offTheCooperativePool(.agentsPool)) struct StateOrderTests {
    @Test func noStateRunsAheadOfOrBehindTheTransitionsReceivedBeforeIt() async throws {
        let drive = try SyntheticDriveFiles()
        defer { drive.remove() }
        let expected = try drive.simulatedEvents().count

        try await withTestAgent { configuration in
            configuration.conditionsFile = drive.conditions
            // 100x: a fix every 10 ms, so transitions often come closer together than the state's 250 ms spacing.
            configuration.replay = .init(gpx: drive.gpx, speedFactor: 100)
        } _: { agent in
            let eventTopic = agent.topics.events
            let stateTopic = agent.topics.state
            // Each event once, by its id: a redelivery (at least once) would tell the same state again.
            func events(_ messages: [MQTTMessageObject]) -> Int { Set(messages.compactMap { $0["eventId"] }).count }
            let sent = await agent.messages("+", within: 120) { messages in
                events(messages.filter { $0.topic == eventTopic }.map(MQTTMessageObject.init)) >= expected
            }

            // Per monitor, the conditions the events sent so far leave satisfied.
            var inside: [String: Set<String>] = [:]
            var states = 0
            var disagreements: [String] = []
            for (index, message) in sent.enumerated() where [eventTopic, stateTopic].contains(message.topic) {
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
                    "message \(index) on \(message.topic) is not JSON")
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
            #expect(
                events(sent.filter { $0.topic == eventTopic }.map(MQTTMessageObject.init)) == expected,
                "every transition once")
            // The drive has a transition every 5 s of its time on average: the state went out many times.
            #expect(states >= 20, "\(states) states sent")
            #expect(disagreements.isEmpty, "\(disagreements.count) of \(states): \(disagreements.prefix(5))")
        }
    }
}

/// A message's payload as a JSON object's string members.
struct MQTTMessageObject {
    let members: [String: String]
    init(_ message: Mosquitto.MQTTMessage) {
        let object = (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any] ?? [:]
        members = object.compactMapValues { $0 as? String }
    }
    subscript(key: String) -> String? { members[key] }
}
