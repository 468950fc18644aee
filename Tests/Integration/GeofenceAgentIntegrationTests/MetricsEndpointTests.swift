import AgentTestSupport
import Foundation
import GeofenceCore
import GeofenceStore
import LocalServers
import Logging
import TestSupport
import Testing

@testable import AgentOutputs
@testable import GeofenceAgent

#if canImport(Glibc)
    import Glibc
#endif

/// The endpoint scraped over HTTP while the real agent replays the sail, parsed by Prometheus' own Python
/// client (prometheus_client's text parser).
@Suite(.offTheCooperativePool(.waiting)) struct MetricsEndpointTests {
    @Test func aScrapeDuringAReplayCountsWhatTheAgentDid() async throws {
        let (broker, operatorClient) = try await Sail.brokerWithGeofences()
        defer { broker.stop() }
        defer { Task { await operatorClient.shutdown() } }
        let port = try LocalProcess.freePort()
        // 4x: the sail takes 37 s, so a busy machine still scrapes twice during it.
        let agent = try Sail.agent(brokerPort: broker.port, speedFactor: 4) {
            $0["metrics"] = ["enabled": true, "listen": "127.0.0.1:\(port)", "textfile": "metrics.prom"]
        }
        defer { agent.kill(signal: SIGKILL) }
        try agent.start()

        // During the replay: the fixes counted so far, and more at a later scrape.
        var first: [String: Double] = [:]
        #expect(
            await waitUntil(30) {
                first = (try? scrape(port: port)) ?? [:]
                return (first["geofence_agent_fixes_received_total"] ?? 0) >= 5
            }, "\(agent.log.suffix(1500))")
        let events = #"geofence_agent_events_total{kind="%@"}"#
        func count(_ s: [String: Double], _ kind: String) -> Double {
            s[events.replacingOccurrences(of: "%@", with: kind)] ?? -1
        }
        var last: [String: Double] = [:]
        #expect(
            await waitUntil(60) {
                last = (try? scrape(port: port)) ?? [:]
                return count(last, "exit") >= 2
                    && (last["geofence_agent_fixes_received_total"] ?? 0)
                        > (first["geofence_agent_fixes_received_total"] ?? .infinity)
            }, "\(last)")
        #expect(
            (last["geofence_agent_fixes_received_total"] ?? 0)
                > (first["geofence_agent_fixes_received_total"] ?? .infinity))
        #expect(
            count(last, "enter") == 1 && count(last, "exit") == 2 && count(last, "dwell") == 1
                && count(last, "crossed") == 1, "\(last)")
        for reason in ["noFix", "invalidCoordinate", "poorAccuracy", "outOfOrder", "impossibleSpeed"] {
            #expect(
                last[#"geofence_agent_fixes_rejected_total{reason="\#(reason)"}"#] != nil,
                "every reason is exposed, at 0 too")
        }
        #expect((last["geofence_agent_store_commit_seconds_count"] ?? 0) >= 5, "a commit per fix with events")
        #expect((last["geofence_agent_outbox_ack_seconds_count"] ?? 0) >= 5, "acknowledged events and live updates")
        #expect(
            last["geofence_agent_broker_connected"] == 1 && last["geofence_agent_broker_connections_total"] == 1,
            "connected once: \(last)")
        // One state at 1: a fix while the sail runs, noData once the replay has ended.
        let states = last.filter { $0.key.hasPrefix("geofence_agent_gps_state{") && $0.value == 1 }.map(\.key)
        #expect(
            states == [#"geofence_agent_gps_state{state="fix"}"#]
                || states == [#"geofence_agent_gps_state{state="noData"}"#], "\(states)")
        #expect(last[#"geofence_agent_conditions{monitor="default"}"#] == 5)
        #expect((last["geofence_agent_gps_fix_age_seconds"] ?? -1) >= 0)
        #expect(
            last["geofence_agent_outbox_rows"] != nil
                && last[#"geofence_agent_outbox_dropped_total{kind="transition"}"#] == 0)
        #expect((last["geofence_agent_resident_memory_bytes"] ?? 0) > 5_000_000)
        #expect(last["process_resident_memory_bytes"] == nil, "node_exporter's own name is left to it")
        #expect(last["geofence_agent_running"] == 1)

        // node_exporter's textfile, beside the configuration, parses too.
        let textfile = agent.directory.appendingPathComponent("metrics.prom").path
        #expect(await waitUntil(60) { FileManager.default.fileExists(atPath: textfile) })
        let fromFile = try parseMetrics(try String(contentsOfFile: textfile, encoding: .utf8))
        #expect(fromFile["geofence_agent_fixes_received_total"] != nil)
        // Anything but GET /metrics is turned away.
        #expect(try httpGet(port: port, path: "/").hasPrefix("HTTP/1.1 404"))

        // A reconnect counts: the broker goes away and comes back on its port.
        broker.stop()
        #expect(await waitUntil(60) { (try? scrape(port: port))?["geofence_agent_broker_connected"] == 0 })
        try broker.start()
        #expect(
            await waitUntil(60) {
                last = (try? scrape(port: port)) ?? [:]
                return last["geofence_agent_broker_connected"] == 1
                    && last["geofence_agent_broker_connections_total"] == 2
            }, "\(last)")

        #expect(agent.terminate(within: 15) != nil, "SIGTERM stops the server with the rest")
        #expect(!LocalProcess.canConnect(port: port))
        // The textfile's last word: stopped, not connected.
        let atStop = try parseMetrics(try String(contentsOfFile: textfile, encoding: .utf8))
        #expect(atStop["geofence_agent_running"] == 0 && atStop["geofence_agent_broker_connected"] == 0, "\(atStop)")
    }
}

/// GET over a plain socket: the whole response.
func httpGet(port: Int, path: String) throws -> String {
    guard let fd = LoopbackConnection.open(port: port) else {
        throw AgentTestError("cannot connect to 127.0.0.1:\(port)")
    }
    defer { close(fd) }
    let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var response = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = recv(fd, &chunk, chunk.count, 0)
        if n <= 0 { break }
        response += chunk[0..<n]
    }
    return String(decoding: response, as: UTF8.self)
}

/// One scrape of /metrics, parsed: "name{labels}" → value.
func scrape(port: Int) throws -> [String: Double] {
    let response = try httpGet(port: port, path: "/metrics")
    guard response.hasPrefix("HTTP/1.1 200"), response.contains("Content-Type: text/plain; version=0.0.4"),
        let body = response.range(of: "\r\n\r\n").map({ String(response[$0.upperBound...]) })
    else {
        throw AgentTestError("not a metrics response: \(response.prefix(300))")
    }
    return try parseMetrics(body)
}

/// The text format parsed by prometheus_client (its reference parser): every sample as "name{labels}".
func parseMetrics(_ text: String) throws -> [String: Double] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
        "python3", "-c",
        """
        import sys, json, math
        from prometheus_client.parser import text_string_to_metric_families
        out = {}
        for family in text_string_to_metric_families(sys.stdin.read()):
            for s in family.samples:
                labels = ",".join('%s="%s"' % kv for kv in sorted(s.labels.items()))
                out[s.name + ("{" + labels + "}" if labels else "")] = s.value if math.isfinite(s.value) else str(s.value)
        print(json.dumps(out))
        """,
    ]
    let input = Pipe()
    let output = Pipe()
    let errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let problem = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0, let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    else {
        throw AgentTestError(
            "prometheus_client refused the text: \(String(decoding: problem, as: UTF8.self).suffix(500))")
    }
    // NaN (no fix yet) comes as the string "nan".
    return parsed.compactMapValues { ($0 as? Double) ?? ($0 as? String).flatMap(Double.init) }
}
