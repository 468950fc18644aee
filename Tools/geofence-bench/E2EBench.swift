import AgentFormats
import ArgumentParser
import Foundation
import GeofenceAgent
import LocalServers
import Logging
import Mosquitto
import ReceiverSimulation

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-bench e2e`: from a receiver's report reaching gpsd to the event reaching a subscriber,
/// through the real agent process with its durable outbox.
struct E2EBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "e2e",
        abstract: "Measure the latency from a receiver report through gpsd and the agent to an MQTT subscriber.",
        discussion: """
            A synthetic receiver drives back and forth through a 30 m circle at 40 m/s, one epoch (GGA + RMC, \
            written together) every 100 ms, fed to a gpsd of our own. The agent (the real binary, store on \
            disk with synchronous=FULL) publishes every transition; a subscriber on loopback timestamps it. \
            Latency = arrival at the subscriber (when its MQTT library hands the message over, on the library's \
            network thread) - the moment the epoch that caused the event was written to gpsd; `consumed_p50_ms` \
            is the same taken later, when the subscriber's task reads the message (it also counts the \
            subscriber's own hop between threads). Run with the default configuration; \
            with the early epoch close turned off \
            (gpsd.epochEarlyClose: false), which shows what waiting for the epoch's end costs; and with places \
            off (places.enabled: false), which shows what naming each event's place costs:

            {"scenario": "e2e-latency", "epoch_early_close": ..., "places": ..., "p50_ms": ..., "p99_ms": ..., \
            "consumed_p50_ms": ..., "transitions": ...}

            Example:
              swift build -c release && .build/release/geofence-bench e2e
            """
    )

    @Option(help: "Epochs fed per run.")
    var epochs = 900

    @OptionGroup var agent: AgentExecutable

    func validate() throws {
        guard LocalGPSD.isInstalled else { throw ValidationError("gpsd is not installed: run scripts/setup") }
    }

    func run() async throws {
        UndoOnSignal.install()  // a stopped bench leaves none of its processes, namespaces or files
        let agentPath = try agent.path()
        // As configured by default (places on), without the early close, and without places: the last is the
        // same-run cost of naming each event's place.
        for (earlyClose, places) in [(true, true), (false, true), (true, false)] {
            let (latencies, transitions) = try await measure(
                agentPath: agentPath, earlyClose: earlyClose, places: places)
            let received = latencies.map(\.received).sorted()
            let consumed = latencies.map(\.consumed).sorted()
            func q(_ sorted: [Double], _ p: Double) -> Double {
                sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(p * Double(sorted.count)))]
            }
            print(
                jsonLine([
                    "scenario": "e2e-latency", "epoch_early_close": earlyClose, "places": places,
                    "p50_ms": rounded(q(received, 0.5), 2),
                    "p99_ms": rounded(q(received, 0.99), 2), "max_ms": rounded(received.last ?? .nan, 2),
                    "consumed_p50_ms": rounded(q(consumed, 0.5), 2),
                    "transitions": transitions,
                    "measured": latencies.count,
                ]))
        }
    }

    /// One transition's latency in ms: to the subscriber's library, and to its task.
    private typealias Latency = (received: Double, consumed: Double)

    /// One run: returns each transition's latency.
    private func measure(agentPath: String, earlyClose: Bool, places: Bool) async throws -> ([Latency], Int) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }

        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let origin = (lat: 52.0, lon: 5.0)
        let metresPerDegreeLongitude = 111_320.0 * cos(origin.lat * .pi / 180)
        var lines: [String] = []
        var epochTimes: [String] = []
        for k in 0..<epochs {
            // From -50 m to +50 m and back at 40 m/s, 10 epochs a second: a transition every 1.25 s.
            let speed = 40.0
            let halfSpan = 50.0
            let cycle = 4 * halfSpan / speed
            let t = Double(k) * 0.1
            let phase = t.truncatingRemainder(dividingBy: cycle)
            let x = phase < cycle / 2 ? -halfSpan + phase * speed : halfSpan - (phase - cycle / 2) * speed
            let time = start.addingTimeInterval(t)
            lines.append(
                NMEA.epoch(
                    latitude: origin.lat, longitude: origin.lon + x / metresPerDegreeLongitude, time: time,
                    speedKnots: speed * 3600 / 1852, course: phase < cycle / 2 ? 90 : 270))
            epochTimes.append(iso8601(time))
        }
        let feed = try NMEAFeed(sentences: lines, interval: 0.1)
        defer { feed.stop() }
        let gpsd = try LocalGPSD(sources: [feed.url])
        try gpsd.start()
        defer { gpsd.stop() }

        let conditions =
            #"{"type":"Feature","id":"zone","geometry":{"type":"Point","coordinates":[\#(origin.lon),\#(origin.lat)]},"properties":{"radius":30}}"#
        try conditions.write(to: directory.appendingPathComponent("zone.geojson"), atomically: true, encoding: .utf8)
        let config: [String: Any] = [
            "fleet": "bench", "vehicle": "v1",
            "mqtt": ["host": "127.0.0.1", "port": broker.port],
            "gpsd": ["host": "127.0.0.1", "port": gpsd.port, "epochEarlyClose": earlyClose],
            "store": ["path": "state/agent.sqlite"],
            "conditions": ["file": "zone.geojson"],
            "places": ["enabled": places],
        ]
        let configURL = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: configURL)

        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let subscriber = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "bench-dashboard"), logger: logger)
        await subscriber.start()
        let events = try await subscriber.subscribe("fleet/bench/vehicles/v1/events")
        let arrivals = ArrivalLog()
        let reader = Task {
            for await message in events {
                arrivals.record(
                    received: message.receivedAtNanoseconds, consumed: monotonicNow(), payload: message.payload)
            }
        }
        let pid = try LocalProcess.spawn(
            agentPath, ["run", "--config", configURL.path],
            standardError: directory.appendingPathComponent("agent.log").path)
        defer { LocalProcess.terminate(pid) }
        // The feed starts when the agent's watch opens it in gpsd.
        let deadline = ContinuousClock.now + .seconds(Double(epochs) * 0.1 + 30)
        while feed.linesSent < feed.lineCount, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .seconds(1))
        LocalProcess.terminate(pid)
        await subscriber.shutdown()
        reader.cancel()

        let sent = feed.sentTimes
        var indexByTime: [String: Int] = [:]
        for (k, t) in epochTimes.enumerated() { indexByTime[t] = k }
        var latencies: [Latency] = []
        var transitions = 0
        for (received, consumed, payload) in arrivals.all {
            guard let o = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
                let location = o["location"] as? [String: Any], let gpsTime = location["gpsTime"] as? String
            else { continue }
            transitions += 1
            guard let k = indexByTime[gpsTime], k < sent.count else { continue }
            latencies.append(
                (Double(Int64(received) - Int64(sent[k])) / 1e6, Double(Int64(consumed) - Int64(sent[k])) / 1e6))
        }
        return (latencies, transitions)
    }
}

/// Arrival times of messages, recorded on the subscriber's task: when its library received each one, and
/// when the task read it.
final class ArrivalLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(received: UInt64, consumed: UInt64, payload: [UInt8])] = []
    func record(received: UInt64, consumed: UInt64, payload: [UInt8]) {
        lock.lock()
        entries.append((received, consumed, payload))
        lock.unlock()
    }
    var all: [(received: UInt64, consumed: UInt64, payload: [UInt8])] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }
}

func monotonicNow() -> UInt64 { nowNanoseconds() }
