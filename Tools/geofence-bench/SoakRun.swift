import AgentJobs
import ArgumentParser
import BenchFigures
import Foundation
import GeofenceCore
import GeofenceStore
import LocalServers
import Logging
import Mosquitto

/// One soak (see `SoakBench`): the drive, the servers, the faults on a schedule, and the measurements.
final class Soak: @unchecked Sendable {
    let options: SoakBench
    let agentPath: String
    let directory: URL
    let drive: SoakDrive
    let topics = (prefix: "fleet/soak", vehicle: "fleet/soak/vehicles/v1")
    var storePath: String { directory.appendingPathComponent("state/agent.sqlite").path }
    var agentPID: pid_t = 0
    var samples = SoakSamples()
    let logger = Logger(label: "soak") { _ in SwiftLogNoOpLogHandler() }

    init(options: SoakBench, agentPath: String) throws {
        self.options = options
        self.agentPath = agentPath
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        drive = SoakDrive(seconds: Int(options.hours * 3600))
    }

    struct Result {
        var line: String
        var passed: Bool
    }

    func say(_ text: String) { FileHandle.standardError.write(Data("soak: \(text)\n".utf8)) }

    func run() async throws -> Result {
        defer {
            if options.keep {
                say("kept \(directory.path)")
            } else {
                try? FileManager.default.removeItem(at: directory)
            }
        }
        let conditions = directory.appendingPathComponent("road.geojson")
        try drive.geofences.write(to: conditions, atomically: true, encoding: .utf8)
        let gpx = directory.appendingPathComponent("drive.gpx")
        try drive.gpx().write(to: gpx, atomically: true, encoding: .utf8)
        say("\(drive.seconds) fixes; the transitions simulate gives on the same drive…")
        let expected = try Transition.simulated(
            agentPath: agentPath, conditions: conditions.path, track: gpx.path, directory: directory, within: 600
        )
        .filter { $0.event == "enter" || $0.event == "exit" }

        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let feed = try NMEAFeed(sentences: drive.sentences(), interval: 1 / options.speed)
        defer { feed.stop() }
        let gpsd = try LocalGPSD(sources: [feed.url])
        try gpsd.start()
        defer { gpsd.stop() }

        // The dashboard: a persistent session, so events published while it is away still reach it.
        let dashboard = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "soak-dashboard"), logger: logger)
        await dashboard.start()
        let events = try await dashboard.subscribe("\(topics.vehicle)/events")
        let heard = EventLog()
        let reader = Task { for await m in events { heard.record(m.payload) } }
        defer { reader.cancel() }
        let operatorClient = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "soak-operator"), logger: logger)
        await operatorClient.start()
        for (id, feature) in drive.features {
            _ = try await operatorClient.publish(
                "\(topics.prefix)/geofences/\(id)", payload: Array(feature.utf8), retain: true)
        }

        let config: [String: Any] = [
            "fleet": "soak", "vehicle": "v1",
            "mqtt": ["host": "127.0.0.1", "port": broker.port],
            "gpsd": ["host": "127.0.0.1", "port": gpsd.port],
            "store": ["path": "state/agent.sqlite"],
            "places": ["enabled": false],
        ]
        try JSONSerialization.data(withJSONObject: config).write(to: directory.appendingPathComponent("config.json"))
        try startAgent()
        defer { LocalProcess.terminate(agentPID) }
        try await waitUntilTheAgentReadsGPSD()

        let realSeconds = Double(drive.seconds) / options.speed
        var schedule = SoakSchedule(realSeconds: realSeconds, options: options)
        say(String(format: "driving %.0f s of real time; %@", realSeconds, schedule.summary))
        let started = ContinuousClock.now
        func elapsed() -> Double { seconds(ContinuousClock.now - started) }
        var churn = 0
        var liveOn = false
        var lastSample = 0.0
        var lastChurn = 0.0
        var lastLive = 0.0
        var lastProgress = 0.0
        while feed.linesSent < feed.lineCount {
            let now = elapsed()
            if let fault = schedule.due(at: now) {
                try await perform(fault, broker: broker, gpsd: gpsd, feed: feed)
                continue
            }
            if now - lastSample >= 10 {
                samples.take(pid: agentPID, at: now, store: storePath)
                lastSample = now
            }
            if now - lastChurn >= 10, broker.isRunning {
                // Other geofences come and go throughout, some across the road.
                churn += 1
                let id = "churn-\(churn)"
                _ = try? await operatorClient.publish(
                    "\(topics.prefix)/geofences/\(id)", payload: Array(drive.churnFeature(id, k: churn).utf8),
                    retain: true)
                if churn > 3 {
                    _ = try? await operatorClient.publish(
                        "\(topics.prefix)/geofences/churn-\(churn - 3)", payload: [], retain: true)
                }
                lastChurn = now
            }
            if now - lastLive >= 60, broker.isRunning {
                liveOn.toggle()
                _ = try? await operatorClient.publish(
                    "\(topics.vehicle)/cmd", payload: Array((liveOn ? "startLiveUpdates" : "stopLiveUpdates").utf8))
                lastLive = now
            }
            if now - lastProgress >= 60 {
                say(
                    String(
                        format: "%.0f s: %d of %d fixes fed, %d events heard, RSS %.1f MB", now, feed.linesSent,
                        feed.lineCount, heard.count, samples.rss.last?.megabytes ?? -1))
                lastProgress = now
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        let drivenIn = elapsed()
        while let fault = schedule.remaining() { try await perform(fault, broker: broker, gpsd: gpsd, feed: feed) }
        if !broker.isRunning { try broker.start() }
        samples.take(pid: agentPID, at: elapsed(), store: storePath)

        // Every transition, once the outbox has drained.
        let settle = ContinuousClock.now
        while ContinuousClock.now - settle < .seconds(120),
            heard.distinctTransitions(of: drive.identifiers).count < expected.count
        {
            try await Task.sleep(for: .milliseconds(500))
        }
        try await Task.sleep(for: .seconds(2))
        let cpu = samples.cpuSeconds(adding: agentPID)
        LocalProcess.terminate(agentPID)
        await operatorClient.shutdown()
        await dashboard.shutdown()
        return result(expected: expected, heard: heard, drivenIn: drivenIn, cpu: cpu)
    }

    func startAgent() throws {
        agentPID = try LocalProcess.spawn(
            agentPath, ["run", "--config", directory.appendingPathComponent("config.json").path],
            standardError: directory.appendingPathComponent("agent-\(samples.processes + 1).log").path)
        samples.processes += 1
    }

    /// Waits until the agent's status file, written by this process, says it reads gpsd.
    func waitUntilTheAgentReadsGPSD() async throws {
        let since = ContinuousClock.now
        while ContinuousClock.now - since < .seconds(60) {
            if let data = FileManager.default.contents(atPath: StorePaths(storePath).status),
                let status = try? JSONParser.parse(Array(data)), status["pid"] == .number(Double(agentPID)),
                case .object(let gps)? = status["gps"], case .string(let state)? = gps["state"],
                ["noData", "noFix", "fix"].contains(state)
            {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("the agent did not read gpsd within 60 s (log: \(directory.path))")
    }

    func perform(_ fault: SoakSchedule.Fault, broker: LocalMosquitto, gpsd: LocalGPSD, feed: NMEAFeed) async throws {
        switch fault {
        case .restartBroker:
            say("broker restarted")
            broker.stop()
            try broker.start()
        case .stopBroker:
            say("broker down")
            broker.stop()
        case .startBroker:
            say("broker back")
            try broker.start()
        case .restartGPSD:
            say("gpsd restarted")
            feed.pause()
            try await Task.sleep(for: .milliseconds(500))
            gpsd.stop()
            try gpsd.start()
            try await waitUntilTheAgentReadsGPSD()
            feed.resume()
        case .killAgent:
            say("agent killed (SIGKILL) and started again")
            feed.pause()
            try await Task.sleep(for: .milliseconds(500))
            samples.take(pid: agentPID, at: -1, store: storePath)
            samples.endProcess(agentPID)
            kill(agentPID, SIGKILL)
            _ = LocalProcess.reap(agentPID, within: 5)
            try startAgent()
            try await waitUntilTheAgentReadsGPSD()
            feed.resume()
        }
    }

    func result(expected: [Transition], heard: EventLog, drivenIn: Double, cpu: Double) -> Result {
        let distinct = heard.distinctTransitions(of: drive.identifiers)
        let rss = samples.rss
        // Per geofence, the kinds in order (a transition an outage or a restart delayed keeps its place), and
        // the memory of the first and the last hour and tenth of driving.
        let verdict = SoakVerdict(
            expected: expected.map { ($0.identifier, $0.event) }, heard: distinct.map { ($0.identifier, $0.event) },
            rss: rss, drivenIn: drivenIn, speed: options.speed)
        let (delivered, memoryChecked, memoryFlat) = (verdict.delivered, verdict.memoryChecked, verdict.memoryFlat)
        let samplesCSV =
            "seconds,rss_mb\n" + rss.map { String(format: "%.1f,%.2f", $0.at, $0.megabytes) }.joined(separator: "\n")
            + "\n"
            + "\nsample,store_mb,wal_mb\n"
            + zip(samples.storeMegabytes, samples.walMegabytes).enumerated().map {
                String(format: "%d,%.2f,%.2f", $0.offset, $0.element.0, $0.element.1)
            }.joined(separator: "\n") + "\n"
        try? samplesCSV.write(to: directory.appendingPathComponent("rss.csv"), atomically: true, encoding: .utf8)
        let passed = verdict.passed
        let line = jsonLine([
            ("scenario", "soak"), ("hours", options.hours), ("speed", options.speed), ("real_s", rounded(drivenIn, 0)),
            ("fixes", drive.seconds), ("transitions_expected", expected.count),
            ("transitions_heard", heard.transitionCount(of: drive.identifiers)),
            ("transitions_distinct", distinct.count),
            ("duplicates_removed", heard.transitionCount(of: drive.identifiers) - distinct.count),
            ("delivered_exactly_once_in_order", delivered), ("agent_processes", samples.processes),
            ("rss_first_hour_mb", rounded(verdict.firstHourMegabytes, 1)),
            ("rss_last_hour_mb", rounded(verdict.lastHourMegabytes, 1)),
            ("rss_first_tenth_mb", rounded(verdict.firstTenthMegabytes, 1)),
            ("rss_last_tenth_mb", rounded(verdict.lastTenthMegabytes, 1)),
            ("rss_max_mb", rounded(rss.map(\.megabytes).max() ?? -1, 1)),
            ("memory_checked", memoryChecked), ("memory_flat", memoryFlat),
            ("store_max_mb", rounded(samples.storeMegabytes.max() ?? -1, 1)),
            ("store_end_mb", rounded(samples.storeMegabytes.last ?? -1, 1)),
            ("wal_max_mb", rounded(samples.walMegabytes.max() ?? -1, 1)),
            ("wal_end_mb", rounded(samples.walMegabytes.last ?? -1, 1)),
            ("fds_first", samples.lastProcessFDs.first ?? -1), ("fds_last", samples.lastProcessFDs.last ?? -1),
            ("threads_first", samples.lastProcessThreads.first ?? -1),
            ("threads_last", samples.lastProcessThreads.last ?? -1),
            ("cpu_s", rounded(cpu, 1)), ("cpu_us_per_fix", rounded(cpu * 1e6 / Double(drive.seconds), 1)),
            ("passed", passed),
        ])
        if !delivered {
            let want = SoakVerdict.sequences(expected.map { ($0.identifier, $0.event) })
            let got = SoakVerdict.sequences(distinct.map { ($0.identifier, $0.event) })
            for id in drive.identifiers where want[id] != got[id] {
                say(
                    "\(id): expected \(want[id]?.count ?? 0) transitions, heard \(got[id]?.count ?? 0): first difference at \(zip(want[id] ?? [], got[id] ?? []).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(want[id]?.count ?? 0, got[id]?.count ?? 0))"
                )
            }
        }
        return Result(line: line, passed: passed)
    }
}

/// The events the dashboard heard, in arrival order.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var payloads: [[UInt8]] = []

    func record(_ p: [UInt8]) {
        lock.lock()
        payloads.append(p)
        lock.unlock()
    }
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return payloads.count
    }

    private func transitions(of identifiers: Set<String>) -> [(id: String?, transition: Transition)] {
        lock.lock()
        let all = payloads
        lock.unlock()
        return all.compactMap { p in
            guard let t = Transition(p), identifiers.contains(t.identifier), t.event == "enter" || t.event == "exit"
            else { return nil }
            if case .string(let eventID)? = (try? JSONParser.parse(p))?["eventId"] { return (eventID, t) }
            return (nil, t)
        }
    }

    func transitionCount(of identifiers: Set<String>) -> Int { transitions(of: identifiers).count }

    /// Each transition once, by eventId, in the order it first arrived.
    func distinctTransitions(of identifiers: Set<String>) -> [Transition] {
        var seen = Set<String>()
        return transitions(of: identifiers).compactMap { entry in
            guard let id = entry.id else { return entry.transition }
            return seen.insert(id).inserted ? entry.transition : nil
        }
    }
}
