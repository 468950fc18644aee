import AgentTestSupport
import Foundation
import GeofenceCore
import LocalServers
import ReceiverSimulation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 34 end to end: a drive whose position multipath pulls into four circles beside the road, through
/// a real gpsd and a real mosquitto, gives exactly the clean drive's transitions.
@Suite(.offTheCooperativePool(.waiting)) struct MultipathEndToEndTests {
    func transitions(_ fixes: [Location], _ configuration: MonitorConfiguration) -> [String] {
        var monitors = MonitorSet(configuration: configuration)
        for c in UrbanDrive.conditions { monitors.add(c.condition, identifier: c.id, monitor: "default") }
        return fixes.flatMap { fix in
            monitors.process(fix).steps.flatMap(\.events).filter(\.isPublished).map {
                "\($0.identifier) \($0.kind.rawValue)"
            }
        }
    }

    @Test func theDriveFoolsTheRuleWithoutTheCheckAndNotTheCheck() {
        let drive = UrbanDrive()
        #expect(transitions(UrbanDrive(multipath: false).fixes, MonitorConfiguration()) == UrbanDrive.truth)
        let fooled = transitions(drive.fixes, .withoutMotionCheck)
        #expect(fooled.filter { $0.hasPrefix("side-") }.count == 8, "\(fooled)")
        #expect(transitions(drive.fixes, MonitorConfiguration()) == UrbanDrive.truth)
    }

    @Test func throughARealGpsdAndBrokerOnlyTheTrueTransitionsArrive() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let dashboard = try await EventSubscriber(port: broker.port)
        let feed = try NMEAFeed(sentences: UrbanDrive().sentences, interval: 0.0005)
        defer { feed.stop() }
        let (gpsd, agent) = try AgentFixture.onGPSD(feed: feed, brokerPort: broker.port)
        defer { gpsd.stop() }
        try UrbanDrive.geoJSON.write(
            to: agent.directory.appendingPathComponent("conditions.geojson"), atomically: true, encoding: .utf8)
        try agent.start()
        defer { agent.kill(signal: SIGKILL) }

        #expect(await waitUntil(120) { feed.linesSent == feed.lineCount }, "\(agent.log.suffix(2000))")
        #expect(
            await waitUntil(60) { dashboard.unique.count >= UrbanDrive.truth.count },
            "\(dashboard.unique.count) events: \(agent.log.suffix(2000))")
        // A moment for anything false to follow, then a clean stop.
        try await Task.sleep(for: .seconds(1))
        #expect(agent.terminate(within: 10) != nil)
        let got = dashboard.unique.map { "\($0["identifier"] as? String ?? "") \($0["event"] as? String ?? "")" }
        #expect(got == UrbanDrive.truth, "\(got)")
        // Every published event's fix was checked against the motion and agreed.
        let verdicts = dashboard.unique.compactMap { ($0["location"] as? [String: Any])?["motion"] as? String }
        #expect(verdicts == Array(repeating: "consistent", count: UrbanDrive.truth.count), "\(verdicts)")
        await dashboard.stop()
    }
}
