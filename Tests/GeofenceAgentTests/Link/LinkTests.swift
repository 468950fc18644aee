import Foundation
import LocalServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The agent over a link that behaves like a vehicle's: two namespaces of our own joined by a relay
/// (`CellularLink`), the broker and a subscriber on one side, the agent on the other.
@Suite(.serialized, .offTheCooperativePool(.waiting)) struct LinkTests {
    /// The broker, a subscriber to every topic of the fleet, both in the broker's namespace.
    final class BrokerSide {
        let broker: LocalMosquitto
        let subscriberPID: pid_t
        let received: String

        init(link: CellularLink) throws {
            broker = try LocalMosquitto()
            broker.namespace = (link.broker, link.brokerAddress)
            try broker.start()
            received = broker.path("received.txt")
            let sub = link.command(
                in: link.broker,
                [
                    "/usr/bin/mosquitto_sub", "-h", link.brokerAddress, "-p", "\(broker.port)", "-t", "fleet/#", "-v",
                    "-q", "1",
                ])
            subscriberPID = try LocalProcess.spawn(sub.tool, sub.arguments, standardOutput: received)
        }

        func stop() {
            LocalProcess.terminate(subscriberPID)
            broker.stop()
        }

        /// The events heard, as the agent published them.
        var events: [[String: Any]] {
            let text = (try? String(contentsOfFile: received, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                guard line.hasPrefix("fleet/test/vehicles/v1/events ") else { return nil }
                let json = line.dropFirst("fleet/test/vehicles/v1/events ".count)
                return try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
            }
        }

        var log: String { (try? String(contentsOfFile: broker.path("broker.log"), encoding: .utf8)) ?? "" }
    }

    /// The agent in the vehicle's namespace, from a fixture's configuration pointed at the broker's side.
    func startAgent(_ fixture: AgentFixture, link: CellularLink) throws -> pid_t {
        let run = link.command(
            in: link.vehicle, [AgentBinary.url.path, "run", "--config", fixture.configURL.path, "--log-level", "info"])
        return try LocalProcess.spawn(
            run.tool, run.arguments, standardOutput: fixture.logPath, standardError: fixture.logPath)
    }

    func fixture(_ link: CellularLink, broker: BrokerSide, speedFactor: Double, liveUpdates: Bool) throws
        -> AgentFixture
    {
        try AgentFixture(brokerPort: broker.broker.port, speedFactor: speedFactor) { config in
            config["mqtt"] = ["host": link.brokerAddress, "port": broker.broker.port]
            config["liveUpdates"] = ["startedByDefault": liveUpdates]
        }
    }

    /// Replays the synthetic drive with live updates on, the agent in the vehicle's namespace, until the
    /// replay ends it; checks every transition arrived at the broker's side, and hands over what it heard.
    func drive(over profile: CellularLink.Profile, check: (CellularLink, BrokerSide) throws -> Void) async throws {
        let link = try CellularLink(profile: profile)
        defer { link.stop() }
        let side = try BrokerSide(link: link)
        defer { side.stop() }
        let agent = try fixture(link, broker: side, speedFactor: 20, liveUpdates: true)
        let pid = try startAgent(agent, link: link)
        let exited = await waitUntil(180) { LocalProcess.reap(pid, within: 0) }
        #expect(exited, "the replay ends the agent: \(agent.log.suffix(2000))")
        let expected = try expectedTransitions(in: agent)
        #expect(await waitUntil(10) { side.events.count >= expected.count })
        #expect(perCondition(side.events) == perCondition(expected))
        try check(link, side)
    }

    @Test func everyTransitionCrossesACleanLinkOnceAndInOrder() async throws {
        try await drive(over: .clean) { link, side in
            let sequences = side.events.compactMap { $0["sequence"] as? Int }
            #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count, "once and in order")
            let bytes = try link.vehicleBytes()
            #expect(bytes.up > 0 && bytes.down > 0, "the vehicle's interface counted \(bytes)")
        }
    }

    /// libmosquitto stores the new socket before its blocking connect returns and queues CONNECT only
    /// after: a publish in that window goes out before CONNECT, and the broker drops the client ("protocol
    /// error"). On a link with 300 ms each way the handshake takes long enough every time.
    @Test func aSlowHandshakeLeavesNoProtocolErrorInTheBrokersLog() async throws {
        try await drive(over: .init(name: "slow", delay: 0.3, jitter: 0.05, loss: 0)) { _, side in
            #expect(
                !side.log.contains("protocol error"),
                "\(side.log.split(separator: "\n").filter { $0.contains("error") })")
        }
    }
}
