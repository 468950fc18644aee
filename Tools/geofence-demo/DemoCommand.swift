import ArgumentParser
import Foundation
import LocalServers
import Logging
import Mosquitto

#if canImport(Glibc)
    import Glibc
#endif

/// The README's first command: the agent's main job on an embedded default, with no hardware. A local
/// mosquitto, gpsd replaying a real sail (or, without gpsd, the same sail as GPX in process), sample
/// geofences pushed over MQTT as an operator would, one of them malformed, and a dashboard printing what
/// arrives.
@main
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geofence-demo",
        abstract: "Run geofence-agent against a local broker and a replayed real drive, and show the events.",
        discussion: """
            Example (from the repository root, after scripts/setup):
              swift build -c release && .build/release/geofence-demo
            """
    )

    @Option(help: "The repository root (examples/ and Tests/ are read from it).")
    var root = "."

    @Option(help: "The geofence-agent executable (default: beside this one).")
    var agent: String?

    @Flag(help: "Replay the GPX in the agent even when gpsd is installed.")
    var gpx = false

    @Flag(
        name: .customLong("dashboard"),
        help:
            "Wait (up to 5 minutes) for a browser to open the dashboard before the drive, and keep it up 5 minutes after."
    )
    var waitForBrowser = false

    @Option(help: "Keep the broker and the dashboard up this many seconds after the drive, to look around.")
    var linger: Int?

    func run() async throws {
        // Stopped by Ctrl-C or SIGTERM, the demo stops its broker, gpsd and agent and removes its files.
        UndoOnSignal.install()
        let rootURL = URL(fileURLWithPath: root)
        let agentPath =
            try agent
            ?? URL(fileURLWithPath: FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent().appendingPathComponent("geofence-agent").path
        let logger = Logger(label: "demo") { _ in SwiftLogNoOpLogHandler() }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("geofence-demo-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let removeWork = UndoOnSignal.removal(of: work.path)
        defer { removeWork.now() }

        say("1. a local mosquitto on a free port, serving the dashboard too (MQTT over WebSockets)")
        let broker = try LocalMosquitto()
        let site = rootURL.appendingPathComponent("dashboard")
        let dashboardReady = FileManager.default.fileExists(
            atPath: site.appendingPathComponent("vendor/mqtt.min.js").path)
        let webPort = dashboardReady ? try broker.addWebSocketListener(httpDirectory: site.path) : nil
        try broker.start()
        defer { broker.stop() }
        say("   127.0.0.1:\(broker.port)")
        if let webPort {
            say(
                "   dashboard: http://127.0.0.1:\(webPort)/?fleet=demo   (open it in a browser on this machine; see --dashboard)"
            )
        } else {
            say("   (no dashboard: dashboard/vendor/ is missing; scripts/setup builds it)")
        }

        say("2. an operator pushes the sample geofences, retained, on fleet/demo/geofences/ID")
        let operatorClient = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "demo-operator"), logger: logger)
        await operatorClient.start()
        let data = try Data(contentsOf: rootURL.appendingPathComponent("examples/ijsselmeer.geojson"))
        let features =
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["features"] as? [[String: Any]] ?? []
        for feature in features {
            let id = feature["id"] as? String ?? "?"
            _ = try await operatorClient.publish(
                "fleet/demo/geofences/\(id)", payload: Array(try JSONSerialization.data(withJSONObject: feature)),
                retain: true)
            say("   \(id): \((feature["properties"] as? [String: Any])?["name"] as? String ?? "")")
        }
        let broken =
            #"{"type":"Feature","id":"broken","geometry":{"type":"Polygon","coordinates":[[[5.3,52.8],[5.4,52.8],[5.4,91.2],[5.3,52.8]]]},"properties":{}}"#
        _ = try await operatorClient.publish("fleet/demo/geofences/broken", text: broken, retain: true)
        say("   broken: a polygon with a latitude of 91.2 (the vehicle must reject it)")

        say("3. a dashboard subscribes to fleet/demo/vehicles/vehicle-1/#")
        let dashboard = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "demo-dashboard"), logger: logger)
        await dashboard.start()
        let messages = try await dashboard.subscribe("fleet/demo/vehicles/vehicle-1/#")

        var config: [String: Any] = [
            "fleet": "demo", "vehicle": "vehicle-1",
            "mqtt": ["host": "127.0.0.1", "port": broker.port],
            "store": ["path": work.appendingPathComponent("state/agent.sqlite").path],
            "liveUpdates": ["configuration": "otherNavigation", "startedByDefault": true],
        ]
        var feed: NMEAFeed?
        var gpsd: LocalGPSD?
        let log = rootURL.appendingPathComponent("Tests/Support/GPSDTestSupport/Fixtures/gpsd-logs/bundg_zeus_9.log")
        if !gpx && LocalGPSD.isInstalled && FileManager.default.fileExists(atPath: log.path) {
            // About 20 lines per second of sailing: the 148 s sail takes about 15 s.
            feed = try NMEAFeed(log: log, interval: 0.0025)
            gpsd = try LocalGPSD(sources: [feed!.url])
            try gpsd!.start()
            config["gpsd"] = ["host": "127.0.0.1", "port": gpsd!.port]
            say("4. gpsd replays a real receiver capture (B&G Zeus2, IJsselmeer 2018) on 127.0.0.1:\(gpsd!.port)")
        } else {
            config["replay"] = [
                "gpx": rootURL.appendingPathComponent("examples/ijsselmeer-sail.gpx").path, "speedFactor": 10,
                "exitAtEnd": true,
            ]
            say("4. \(gpx ? "--gpx" : "gpsd is not available"): the agent replays the same sail from GPX at 10x")
        }
        defer {
            gpsd?.stop()
            feed?.stop()
        }
        let configURL = work.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted]).write(to: configURL)

        if waitForBrowser, let webPort {
            say("   waiting for a browser at http://127.0.0.1:\(webPort)/?fleet=demo (up to 5 minutes)")
            say(
                await Self.browserConnected(log: broker.path("broker.log"), within: .seconds(300))
                    ? "   the dashboard is open" : "   no browser came; going on")
        }
        say("5. geofence-agent run --config \(configURL.path)")
        let agentLog = work.appendingPathComponent("agent.log").path
        let pid = try LocalProcess.spawn(
            agentPath, ["run", "--config", configURL.path], standardOutput: agentLog, standardError: agentLog)
        defer { LocalProcess.terminate(pid) }

        say(
            "   each EVENT shows the sail's GPS time, the geofence, what happened, the state after it and the nearest place;"
        )
        say("   #N is its sequence number: it grows per vehicle, and a dashboard drops a redelivered event by it")
        say("   (or by eventId). STATE lines are the retained state topic: where the boat is, whenever it changes.")
        var counts: [String: Int] = [:]
        let watcher = Task {
            var counts: [String: Int] = [:]
            var lastInside: String?
            for await m in messages {
                let kind = String(m.topic.split(separator: "/").last ?? "")
                counts[kind, default: 0] += 1
                let o = (try? JSONSerialization.jsonObject(with: Data(m.payload))) as? [String: Any] ?? [:]
                switch kind {
                case "events":
                    // The sail's own time (gpsTime), not the moment the demo replays it.
                    let location = o["location"] as? [String: Any] ?? [:]
                    let time = location["gpsTime"] as? String ?? o["time"] as? String ?? ""
                    say(
                        "   EVENT  \(time)  \(o["identifier"] as? String ?? "") \(o["event"] as? String ?? "") -> \(o["state"] as? String ?? "")  (\(o["name"] as? String ?? ""))\(Self.near(o["place"]))  #\(o["sequence"] as? Int ?? 0)"
                    )
                case "state":
                    if let line = Self.describeState(o), line != lastInside {
                        say("   STATE  \(line)")
                        lastInside = line
                    }
                case "errors":
                    say("   ERROR  \(o["topic"] as? String ?? ""): \(o["reason"] as? String ?? "")")
                case "status" where (o["status"] as? String) == "offline":
                    say("   STATUS offline")
                default:
                    break
                }
            }
            return (counts, lastInside)
        }
        // The drive: until the feed is done (or the GPX replay ends the agent), then a moment to deliver.
        let deadline = ContinuousClock.now + .seconds(100)
        while ContinuousClock.now < deadline {
            if let feed, feed.linesSent == feed.lineCount {
                try await Task.sleep(for: .seconds(2))
                break
            }
            if feed == nil, LocalProcess.reap(pid, within: 0) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        say("6. stopping the agent (SIGTERM: it publishes its offline status)")
        LocalProcess.terminate(pid)
        try await Task.sleep(for: .seconds(1))
        await dashboard.shutdown()
        let finalState: String?
        (counts, finalState) = await watcher.value
        await operatorClient.shutdown()

        say("")
        say(
            "summary: \(counts["events"] ?? 0) events, \(counts["location"] ?? 0) live updates, \(counts["state"] ?? 0) state updates, \(counts["status"] ?? 0) status messages, \(counts["errors"] ?? 0) rejected definitions"
        )
        say("final state: \(finalState ?? "none published")")
        say("")
        say("next: run the agent against your own broker and receiver (docs/configuration.md), then watch it:")
        say("  mosquitto_sub -h BROKER -t 'fleet/FLEET/vehicles/+/#' -v      every vehicle's events, state and status")
        say("  geofence-agent status --config config.json                    on the vehicle")
        say("  geofence-agent push --config config.json --conditions F.geojson   push geofences to the fleet")
        say("the topics and payloads are in docs/topics.md; the dashboard in docs/map.md")
        if let webPort, let seconds = linger ?? (waitForBrowser ? 300 : nil), seconds > 0 {
            say("")
            say(
                "the dashboard stays up for \(seconds) s at http://127.0.0.1:\(webPort)/?fleet=demo (Ctrl-C ends it sooner)"
            )
            try await Task.sleep(for: .seconds(seconds))
        }
        guard (counts["events"] ?? 0) > 0, (counts["errors"] ?? 0) > 0 else {
            say("the demo did not see the expected events; the agent's log follows")
            say((try? String(contentsOfFile: agentLog, encoding: .utf8)) ?? "")
            throw ExitCode(1)
        }
    }
}

extension DemoCommand {
    /// One line for a `state` message: which geofences the boat is inside, and how many are undecided.
    static func describeState(_ o: [String: Any]) -> String? {
        guard let monitors = o["monitors"] as? [String: Any] else { return nil }
        var inside: [String] = []
        var unknown = 0
        var total = 0
        for case let m as [String: Any] in monitors.values {
            inside += ((m["inside"] as? [String: Any]) ?? [:]).keys.sorted()
            unknown += m["unknown"] as? Int ?? 0
            total += m["conditions"] as? Int ?? 0
        }
        guard total > 0 else { return nil }
        let origin = inside.isEmpty ? "inside none" : "inside \(inside.sorted().joined(separator: ", "))"
        return "\(origin) (of \(total) geofences\(unknown > 0 ? ", \(unknown) not yet decided" : ""))"
    }
}

extension DemoCommand {
    /// Whether the dashboard page connected (its client ids begin with `dashboard-`), from the broker's log.
    static func browserConnected(log: String, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOfFile: log, encoding: .utf8), text.contains(" as dashboard-") {
                return true
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
        return false
    }
}

func say(_ text: String) {
    print(text)
    fflush(nil)
}

extension DemoCommand {
    /// ", 10.2 km from Bakhuizen, Friesland, NL" for an event's `place` (places on), else nothing.
    static func near(_ place: Any?) -> String {
        guard let p = place as? [String: Any], let locality = p["locality"] as? String else { return "" }
        let area = [locality, p["administrativeArea"] as? String, p["isoCountryCode"] as? String].compactMap { $0 }
            .joined(separator: ", ")
        let metres = p["distance"] as? Double ?? 0
        return metres < 1000 ? ", at \(area)" : ", \(String(format: "%.1f", metres / 1000)) km from \(area)"
    }
}
