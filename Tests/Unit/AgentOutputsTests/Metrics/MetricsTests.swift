import AgentTestSupport
import Foundation
import GeofenceCore
import GeofenceStore
import LocalServers
import Logging
import ServiceLifecycleTestKit
import TestSupport
import Testing

@testable import AgentOutputs
@testable import GeofenceAgent

#if canImport(Glibc)
    import Glibc
#endif

/// `metrics` in config.json: what is refused, and where.
@Suite(.offTheCooperativePool(.computing)) struct MetricsSettingsTests {
    func parse(_ metrics: String) -> String {
        do {
            let c = try AgentConfiguration.parse(
                Array(#"{"fleet":"f","vehicle":"v","metrics":\#(metrics)}"#.utf8), name: "config.json")
            let m = c.outputs[MetricsSettings.self]
            return "\(m.enabled) \(m.host):\(m.port) \(m.textfile ?? "-")"
        } catch {
            return "\(error)"
        }
    }

    @Test func listenAndTextfile() {
        #expect(parse(#"{"enabled":true}"#) == "true 127.0.0.1:9465 -", "loopback by default")
        #expect(
            parse(#"{"enabled":true,"listen":"0.0.0.0:9100","textfile":"/var/lib/node_exporter/geofence.prom"}"#)
                == "true 0.0.0.0:9100 /var/lib/node_exporter/geofence.prom")
        #expect(parse(#"{"listen":"localhost:9100"}"#).contains("metrics.listen: expected IPV4ADDRESS:PORT"))
        #expect(parse(#"{"listen":"127.0.0.1:70000"}"#).contains("metrics.listen: expected IPV4ADDRESS:PORT"))
        #expect(
            parse(#"{"textfile":"/tmp/metrics.txt"}"#).contains(
                "metrics.textfile: node_exporter reads only *.prom files"))
        #expect(parse(#"{"port":9100}"#).contains("metrics.port: unknown key"))
    }
}

/// Prometheus' textfile is its output's own timer: written at once, then every 15 s, until the shutdown.
@Suite(.offTheCooperativePool(.agentsPool)) struct MetricsTextfileServiceTests {
    @Test func theTextfileIsWrittenAndTheTimerStopsAtTheShutdown() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("textfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("agent.prom").path
        let metrics = AgentMetrics()
        metrics.fix(rejected: nil)
        let service = MetricsTextfileService(
            textfile: MetricsTextfile(path: path), metrics: metrics,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        await testGracefulShutdown { trigger in
            let running = Task { await service.run() }
            var written = false
            for _ in 0..<3_000 where !written {
                written = FileManager.default.fileExists(atPath: path)
                if !written { try? await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(written, "the textfile is written at the start")
            trigger.triggerGracefulShutdown()
            await running.value
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("geofence_agent_fixes_received_total 1"))
    }
}

/// Issue 33's counters: trips ended, stops begun, and the metres the trips covered.
@Suite(.offTheCooperativePool(.computing)) struct TripMetricsTests {
    @Test func tripsStopsAndTheirDistanceAreCounted() {
        let metrics = AgentMetrics()
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let stop = Stop(
            arrival: start, coordinate: .init(latitude: 52, longitude: 5), horizontalAccuracy: 2, conditions: [])
        var trip = Trip(
            start: start, startCoordinate: stop.coordinate, distance: 1234.4, maximumSpeed: 14, lastFix: start)
        let output = MetricsOutput(metrics: metrics, settings: MetricsSettings(), logger: Logger(label: "test"))
        for event in [TripEvent.stopStarted(stop), .stopEnded(stop), .tripStarted(trip)] {
            _ = output.messages(for: .trip(TripHappening(event: event, places: nil)))
        }
        trip.end = start.addingTimeInterval(100)
        _ = output.messages(for: .trip(TripHappening(event: .tripEnded(trip), places: nil)))
        _ = output.messages(for: .trip(TripHappening(event: .stopStarted(stop), places: nil)))
        let text = metrics.text()
        #expect(text.contains("geofence_agent_trips_total 1"), "\(text)")
        #expect(text.contains("geofence_agent_stops_total 2"))
        #expect(text.contains("geofence_agent_trip_distance_metres_total 1234"))
    }
}

/// The metrics' contract: every metric docs/integrations.md lists is served under its documented name and
/// type, with a help line (the agent's names are whole strings, not made from a namespace and a unit).
@Suite(.offTheCooperativePool(.computing)) struct MetricsContractTests {
    @Test func everyDocumentedMetricIsServedWithItsTypeAndHelp() throws {
        let docs = try String(contentsOf: Repository.url("docs/integrations.md"), encoding: .utf8)
        let rows = docs.split(separator: "\n").filter { $0.hasPrefix("| `geofence_agent_") }
        #expect(rows.count >= 15, "the table of metrics in docs/integrations.md")
        let metrics = AgentMetrics()
        // The per-monitor gauges are made at the first status that names a monitor.
        metrics.observe(
            AgentStatus(
                status: "online", fleet: "f", vehicle: "v", version: "test", pid: 0, updated: "", startedAt: "",
                broker: "connected", gps: .init(state: "fix"),
                monitors: [.init(name: "default", conditions: 2, satisfied: 1)],
                conditions: 2, outbox: OutboxStats(), outboxCaps: OutboxLimits(), store: "ok", waitingStateChanges: 0,
                liveUpdates: true, heartbeatSeconds: 900))
        let text = metrics.text()
        for row in rows {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let type = cells[1]
            let names = cells[0].split(separator: ",").map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: " `"))
            }
            for name in names {
                #expect(text.contains("# TYPE \(name) \(type)\n"), "\(name) as a \(type)")
                #expect(text.contains("# HELP \(name) "), "\(name)'s help")
            }
        }
    }
}
