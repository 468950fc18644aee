import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The agent over a link that behaves like a vehicle's: two namespaces of our own joined by a relay
/// (`CellularLink`), the broker and a subscriber on one side, the agent on the other. Nothing here is
/// timed: what each drive measured (delays, copies, bytes) is printed for the notes.
@Suite(.offTheCooperativePool(.waiting)) struct LinkTests {
    /// The agent in the vehicle's namespace, from a fixture's configuration pointed at the broker's side.
    func startAgent(_ fixture: AgentFixture, link: CellularLink) throws -> pid_t {
        let run = link.command(
            in: link.vehicle, [AgentBinary.url.path, "run", "--config", fixture.configURL.path, "--log-level", "info"])
        return try LocalProcess.spawn(
            run.tool, run.arguments, standardOutput: fixture.logPath, standardError: fixture.logPath)
    }

    static let speedFactor = 20.0

    func fixture(_ link: CellularLink, broker: BrokerSide, exitAtEnd: Bool) throws -> AgentFixture {
        try AgentFixture(brokerPort: broker.broker.port, speedFactor: Self.speedFactor) { config in
            config["mqtt"] = ["host": link.brokerAddress, "port": broker.broker.port]
            config["liveUpdates"] = ["startedByDefault": true]
            config["replay"] = ["gpx": "drive.gpx", "speedFactor": Self.speedFactor, "exitAtEnd": exitAtEnd]
        }
    }

    /// Replays the synthetic drive (240 transitions) with live updates on, the agent in the vehicle's
    /// namespace, until every transition is heard on the broker's side (or `patience` runs out), then stops
    /// it. `during` runs while the agent drives. Checks each transition arrived, once per `eventId` and in
    /// order, and that nothing made after a transition went before it; hands over what was heard.
    func drive(
        over profile: CellularLink.Profile, patience: Double = 300, during: (CellularLink) async -> Void = { _ in },
        check: (CellularLink, BrokerSide, AgentFixture) throws -> Void = { _, _, _ in }
    ) async throws {
        let link = try CellularLink(profile: profile)
        defer { link.stop() }
        let side = try BrokerSide(link: link)
        defer { side.stop() }
        let agent = try fixture(link, broker: side, exitAtEnd: false)
        let expected = try expectedTransitions(in: agent)
        let pid = try startAgent(agent, link: link)
        defer { LocalProcess.terminate(pid) }
        await during(link)
        let delivered = await waitUntil(patience) {
            Set(side.events.compactMap { $0["eventId"] as? String }).count >= expected.count
        }
        LocalProcess.terminate(pid)
        #expect(delivered, "\(profile.name): \(agent.log.suffix(2000))")

        let heard = side.heard
        let events = heard.filter { $0.topic == "events" }
        var seen: Set<String> = []
        let unique = events.filter { seen.insert($0.json["eventId"] as? String ?? "").inserted }
        #expect(perCondition(unique.map(\.json)) == perCondition(expected), "\(profile.name): every transition")
        let sequences = unique.compactMap(\.sequence)
        #expect(sequences == sequences.sorted(), "\(profile.name): in order")
        // Transitions go first: nothing numbered after a transition is heard before it (its first copy).
        var highestBefore = -1
        var checked: Set<String> = []
        for message in heard {
            guard let sequence = message.sequence else { continue }
            if message.topic == "events" {
                let first = checked.insert(message.json["eventId"] as? String ?? "").inserted
                if first, highestBefore > sequence {
                    Issue.record("\(profile.name): transition \(sequence) was heard after message \(highestBefore)")
                }
            } else {
                highestBefore = max(highestBefore, sequence)
            }
        }
        #expect(!side.log.contains("protocol error"), "\(profile.name): a publish before CONNACK")
        report(profile, unique: unique, copies: events.count - unique.count, heard: heard, link: link)
        try check(link, side, agent)
    }

    /// Prints the drive's figures: each transition's delay (its arrival less when the replay made it, the
    /// replay's clock set by the least delayed transition), the track's messages, the bytes each way.
    func report(
        _ profile: CellularLink.Profile, unique: [BrokerSide.Heard], copies: Int, heard: [BrokerSide.Heard],
        link: CellularLink
    ) {
        let made = unique.compactMap { e -> (Double, Double)? in
            guard let time = (e.json["time"] as? String).flatMap(parseISO8601) else { return nil }
            return (e.at, time.timeIntervalSince1970 / Self.speedFactor)
        }
        let offset = made.map { $0.0 - $0.1 }.min() ?? 0
        let delays = made.map { $0.0 - $0.1 - offset }.sorted()
        func q(_ p: Double) -> Double {
            delays.isEmpty ? .nan : delays[min(delays.count - 1, Int(p * Double(delays.count)))]
        }
        let bytes: (up: Int, down: Int) = (try? link.vehicleBytes()) ?? (0, 0)
        let tracks = heard.filter { $0.topic == "track" }.count
        let locations = heard.filter { $0.topic == "location" }.count
        let p50 = String(format: "%.1f", q(0.5))
        let p95 = String(format: "%.1f", q(0.95))
        let worst = String(format: "%.1f", delays.last ?? .nan)
        print(
            "link \(profile.name): \(unique.count) transitions, \(copies) copies, delay p50 \(p50) s p95 \(p95) s "
                + "max \(worst) s, \(tracks) track batches, \(locations) locations, \(bytes.up) B up, \(bytes.down) B down"
        )
    }

    @Test func everyTransitionCrossesACleanLinkOnceAndInOrder() async throws {
        try await drive(over: .clean) { _ in
        } check: { link, side, _ in
            let sequences = side.events.compactMap { $0["sequence"] as? Int }
            #expect(Set(sequences).count == sequences.count, "no copies on a clean link")
            let bytes = try link.vehicleBytes()
            #expect(bytes.up > 0 && bytes.down > 0, "the vehicle's interface counted \(bytes)")
        }
    }

    /// libmosquitto stores the new socket before its blocking connect returns and queues CONNECT only
    /// after: a publish in that window goes out before CONNECT, and the broker drops the client ("protocol
    /// error"). On a link with 300 ms each way the handshake takes long enough every time.
    @Test func aSlowHandshakeLeavesNoProtocolErrorInTheBrokersLog() async throws {
        try await drive(over: .init(name: "slow", delay: 0.3, jitter: 0.05, loss: 0))
    }

    /// 150 ± 100 ms, 5% loss, 20 s outages every 60 s: the drive (90 s) crosses two, the first 15 s in.
    @Test func everyTransitionCrossesACellularLink() async throws {
        try await drive(over: .cellular.firstOutage(at: 15))
    }

    /// 600 ± 400 ms, 20% loss, 45 s outages every 90 s: the first 20 s into the drive (90 s). The drive makes
    /// 2.7 transitions a second and the broker's 20 messages in flight carry about 5 a second over this link,
    /// so the outage's backlog drains at about 2 a second and part of it waits for the next outage's end:
    /// every transition still arrives, once and in order. `geofence-bench link` measures the delays at a
    /// real drive's density (docs/benchmarks.md).
    @Test func everyTransitionCrossesABadLink() async throws {
        try await drive(over: .bad.firstOutage(at: 20), patience: 400)
    }

    /// A cut of 30 s while the track flows: the sent data stays unacknowledged, and `TCP_USER_TIMEOUT`
    /// (10 s) ends the connection, where the keepalive (120 s) would not have seen a thing; the agent
    /// connects again when the link is back, and every transition still arrives.
    @Test func aStalledConnectionIsDroppedAndMadeAgain() async throws {
        try await drive(over: .clean) { link in
            try? await Task.sleep(for: .seconds(8))
            link.cut(for: 30)
        } check: { _, _, agent in
            #expect(agent.log.contains("MQTT disconnected"), "the stall was seen: \(agent.log.suffix(2000))")
            #expect(agent.log.components(separatedBy: "MQTT connected").count >= 3, "connected again after it")
        }
    }
}

/// An event's `time` (ISO 8601 with milliseconds).
func parseISO8601(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text)
}
