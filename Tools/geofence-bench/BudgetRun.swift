import AgentFormats
import Foundation
import LocalServers

#if canImport(Glibc)
    import Glibc
#endif

/// One run of the agent for `geofence-bench budget`: a replay in a directory of its own, a mosquitto of
/// our own, over a clean link between two namespaces of our own (or loopback), until the replay ends it.
struct BudgetRun {
    var agentPath: String
    var fixes: Int
    var driving: Bool
    var liveUpdates: Bool
    var speedFactor: Double
    var link: Bool
    /// How the link behaves (with `link`).
    var profile: CellularLink.Profile = .clean
    /// Keep the agent past the replay's end until this many transitions are heard (or `patience` runs out).
    var awaitTransitions: Int?
    var patience: Double = 300
    /// Merged into config.json over the run's own keys.
    var extraConfig: [String: Any] = [:]
    /// The broker's Receive Maximum (mosquitto's `max_inflight_messages`); nil: mosquitto's default, 20.
    var brokerInflight: Int?
    /// One mosquitto, or the three-node NATS cluster.
    var broker: BenchBrokerKind = .mosquitto
    /// Seconds after the agent's start between which its threads' CPU is sampled (`Result.window`): what a
    /// second costs once it runs, free of its start and stop.
    var window: ClosedRange<Double>?

    struct Result {
        var fixes: Int
        var spend: ProcessSpend
        /// IP bytes through the vehicle's interface; nil over loopback.
        var wire: (up: Int, down: Int)?
        /// Events a subscriber on the broker's side heard.
        var transitions: Int
        /// Each distinct transition as heard: arrival (Unix seconds) and the event's time (the replay's).
        var arrivals: [(at: Double, time: Date)] = []
        /// What the vehicle published, by the topic's last level: messages and payload bytes.
        var topics: [String: (messages: Int, bytes: Int)] = [:]
        /// The agent's CPU within `BudgetRun.window`: microseconds over seconds.
        var window: (cpuMicroseconds: Double, seconds: Double)?
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func measure() throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("budget-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let removeDirectory = UndoOnSignal.removal(of: directory.path)
        defer { removeDirectory.now() }
        try BudgetRoutes.gpx(fixes: fixes, driving: driving).write(
            to: directory.appendingPathComponent("drive.gpx"), atomically: true, encoding: .utf8)
        try BudgetRoutes.conditions.write(
            to: directory.appendingPathComponent("zones.geojson"), atomically: true, encoding: .utf8)

        let cellular = link ? try CellularLink(profile: profile) : nil
        defer { cellular?.stop() }
        let broker = try BenchBroker(self.broker, link: cellular, inflight: brokerInflight)
        defer { broker.stop() }
        let host = broker.host
        func inBroker(_ arguments: [String]) -> (String, [String]) {
            cellular?.command(in: cellular!.broker, arguments) ?? (arguments[0], Array(arguments.dropFirst()))
        }
        func inVehicle(_ arguments: [String]) -> (String, [String]) {
            cellular?.command(in: cellular!.vehicle, arguments) ?? (arguments[0], Array(arguments.dropFirst()))
        }
        /// A subscriber on the broker's side, each message a line of `format` in `file` of the directory.
        func subscriber(_ filter: String, format: String, file: String) throws -> (path: String, pid: pid_t) {
            let path = directory.appendingPathComponent(file).path
            let sub = inBroker(
                [
                    "/usr/bin/mosquitto_sub", "-h", host, "-p", "\(broker.port)", "-t", filter, "-q", "1", "-F", format,
                ] + broker.subscriberProtocol)
            return (path, try LocalProcess.spawn(sub.0, sub.1, standardOutput: path))
        }
        let (heard, eventsSubscriber) = try subscriber(
            "fleet/budget/vehicles/v1/events", format: "%U %p", file: "events.txt")
        defer { LocalProcess.terminate(eventsSubscriber) }
        // Every message of the vehicle's, by topic and payload length: where the wire's bytes go.
        let (everything, allSubscriber) = try subscriber(
            "fleet/budget/vehicles/v1/#", format: "%t %l", file: "topics.txt")
        defer { LocalProcess.terminate(allSubscriber) }

        // The status file in RAM, as deploy/ sets a vehicle up (`/run/geofence-agent`): on flash it would be
        // most of a parked hour's writes.
        let statusDirectory = "/dev/shm/geofence-bench-\(getpid())-\(UUID().uuidString.prefix(8))"
        let removeStatusDirectory = UndoOnSignal.removal(of: statusDirectory)
        defer { removeStatusDirectory.now() }
        var config: [String: Any] = [
            "fleet": "budget", "vehicle": "v1",
            "mqtt": broker.agentMQTT,
            "store": ["path": "state/agent.sqlite", "statusFile": statusDirectory + "/status.json"],
            "conditions": ["file": "zones.geojson"],
            "replay": ["gpx": "drive.gpx", "speedFactor": speedFactor, "exitAtEnd": awaitTransitions == nil],
            "liveUpdates": ["startedByDefault": liveUpdates],
        ]
        config.merge(extraConfig) { _, extra in extra }
        let configURL = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: configURL)

        let before = try cellular?.vehicleBytes()
        let run = inVehicle([agentPath, "run", "--config", configURL.path])
        let log = directory.appendingPathComponent("agent.log").path
        let pid = try LocalProcess.spawn(run.0, run.1, standardOutput: log, standardError: log)
        let started = Date()
        let windowSpend = window.flatMap { Self.sample(pid, from: started, within: $0) }
        let seconds = Double(fixes) / speedFactor + 120
        if let awaitTransitions {
            let end = Date().addingTimeInterval(Double(fixes) / speedFactor + patience)
            while Date() < end, Self.arrivals(heard).count < awaitTransitions { usleep(200_000) }
            kill(pid, SIGTERM)
        }
        guard let spend = ProcessSpend.atExit(of: pid, within: seconds) else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw Failure(description: "the agent did not end its replay within \(seconds) s: \(text.suffix(1500))")
        }
        let after = try cellular?.vehicleBytes()
        // The subscriber may still be taking the last events in.
        usleep(300_000)
        let arrivals = Self.arrivals(heard)
        let wire = before.flatMap { b in after.map { a in (up: a.up - b.up, down: a.down - b.down) } }
        return Result(
            fixes: fixes, spend: spend, wire: wire, transitions: arrivals.count, arrivals: arrivals,
            topics: Self.topics(everything), window: windowSpend)
    }

    /// The agent's threads' CPU between the window's two times after `started`.
    static func sample(_ pid: pid_t, from started: Date, within window: ClosedRange<Double>)
        -> (cpuMicroseconds: Double, seconds: Double)?
    {
        func at(_ offset: Double) -> (cpu: Double, at: Date)? {
            let wait = started.addingTimeInterval(offset).timeIntervalSinceNow
            if wait > 0 { usleep(useconds_t(wait * 1e6)) }
            return ProcessSpend.runningCPUMicroseconds(pid).map { ($0, Date()) }
        }
        guard let first = at(window.lowerBound), let last = at(window.upperBound) else { return nil }
        return (last.cpu - first.cpu, last.at.timeIntervalSince(first.at))
    }

    /// Messages and payload bytes by the topic's last level, from `%t %l` lines.
    static func topics(_ path: String) -> [String: (messages: Int, bytes: Int)] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var topics: [String: (messages: Int, bytes: Int)] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let level = parts[0].split(separator: "/").last, let bytes = Int(parts[1]) else {
                continue
            }
            topics[String(level), default: (0, 0)].messages += 1
            topics[String(level), default: (0, 0)].bytes += bytes
        }
        return topics
    }

    /// The distinct events in the subscriber's file (`%U %p` lines), first copies only.
    static func arrivals(_ path: String) -> [(at: Double, time: Date)] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var seen: Set<String> = []
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let at = Double(parts[0]),
                let o = try? JSONSerialization.jsonObject(with: Data(parts[1].utf8)) as? [String: Any],
                let id = o["eventId"] as? String, seen.insert(id).inserted,
                let time = (o["time"] as? String).flatMap(formatter.date(from:))
            else { return nil }
            return (at, time)
        }
    }
}
