import Foundation
import Mosquitto

/// Sends a simulated fleet's messages to a broker in real time: each second's messages spread over ten
/// slots of 100 ms, as vehicles that are not synchronised would send them. QoS 1, as the agent sends.
public struct FleetPublisher: Sendable {
    public let client: MQTTClient
    public static let slotsPerSecond = 10

    public init(client: MQTTClient) {
        self.client = client
    }

    /// What was sent.
    public struct Totals: Sendable {
        public var messages = 0
        public var bytes = 0
        /// Slots that began later than 100 ms after their time (the publisher could not keep up).
        public var lateSlots = 0
    }

    /// Publishes `messages`, all of them in flight at once, and returns when the broker acknowledged each.
    public func publish(_ messages: [SimulatedFleet.Message]) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for m in messages {
                group.addTask { _ = try await client.publish(m.topic, payload: m.payload, retain: m.retain) }
            }
            try await group.waitForAll()
        }
    }

    /// Runs the fleet for `seconds` of real time (or until cancelled), then returns the totals.
    public func run(_ fleet: inout SimulatedFleet, seconds: Double) async throws -> Totals {
        var totals = Totals()
        let clock = ContinuousClock()
        let start = clock.now
        let slots = Self.slotsPerSecond
        var k = 0
        while !Task.isCancelled, Double(k) / Double(slots) < seconds {
            let due = start + .milliseconds(k * 1000 / slots)
            if clock.now > due + .milliseconds(100) { totals.lateSlots += 1 }
            try? await clock.sleep(until: due)
            let messages = fleet.tick(slot: k % slots, of: slots, at: Date())
            totals.messages += messages.count
            totals.bytes += messages.reduce(0) { $0 + $1.payload.count }
            do { try await publish(messages) } catch  where Task.isCancelled { break }
            k += 1
        }
        return totals
    }
}
