import AgentFormats
import AgentJobs
import ArgumentParser
import Foundation
import GeofenceAgent
import GeofenceCore
import LocalServers
import Logging
import Mosquitto

/// `geofence-bench agent-fuzz`: mutated geofences and commands sent over a real mosquitto at a running agent
/// that replays a real drive, while its memory is sampled.
struct AgentFuzzBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent-fuzz",
        abstract:
            "Send mutated geofences and commands at a running agent over MQTT; check it answers each and keeps working.",
        discussion: """
            A mosquitto of our own gets the example geofences; the real agent starts against it, replaying the \
            example drive so that it lasts most of the run. Then, at --rate messages a second, an MQTT client \
            sends mutated geofences (from the GeoJSON seeds, each on its own topic, fz-N), mutated commands, and \
            good geofences that it later deletes (ok-N). The same pure validation the agent runs says in advance \
            which messages must be refused. At the end the run checks that:
              - the agent stayed up, and stops on SIGTERM within 5 s with status 0;
              - every refused geofence got its `errors` message (by topic), and nothing else did;
              - as many command refusals arrived as were due;
              - the example geofences gave exactly the transitions `geofence-agent simulate` gives on the drive;
              - every good geofence still held is in the state detail, and every deleted one is not.
            RSS is sampled every 5 s. One JSON line; exit status 1 when a check fails.

            Example:
              swift build -c release && .build/release/geofence-bench agent-fuzz --seconds 600
            """
    )

    @Option(help: "How long to send, in seconds.")
    var seconds = 600.0

    @Option(help: "Messages a second.")
    var rate = 20.0

    @Option(help: "Seed of the mutations (the same seed sends the same messages).")
    var seed: UInt64 = 1

    @Option(help: "The good geofences (a FeatureCollection), also the mutations' seeds.")
    var conditions = "examples/ijsselmeer.geojson"

    @Option(help: "The drive the agent replays.")
    var track = "examples/ijsselmeer-sail.gpx"

    @Option(help: "A folder of further GeoJSON seeds for the mutations.")
    var corpus = "Fuzz/Corpus/GeoJSON"

    @OptionGroup var agent: AgentExecutable

    func run() async throws {
        UndoOnSignal.install()  // a stopped bench leaves none of its processes, namespaces or files
        let agentPath = try agent.path()
        let result = try await AgentFuzzRun(options: self, agentPath: agentPath).run()
        print(result.line)
        if !result.passed { throw ExitCode(1) }
    }
}

/// One run of `agent-fuzz`.
private struct AgentFuzzRun {
    let options: AgentFuzzBench
    let agentPath: String
    let prefix = "fleet/fuzz"
    var vehicleTopic: String { "\(prefix)/vehicles/v1" }

    struct Result {
        var line: String
        var passed: Bool
    }

    func run() async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("agent-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = try Self.features(of: Array(Data(contentsOf: URL(fileURLWithPath: options.conditions))))
        let expectedEvents = try Transition.simulated(
            agentPath: agentPath, conditions: options.conditions, track: options.track, directory: directory, within: 60
        )
        .filter { $0.event != "initial" }
        var mutator = PayloadMutator(random: SplitMix64(seed: options.seed), seeds: try geofenceSeeds(good: good))
        var commands = PayloadMutator(random: SplitMix64(seed: options.seed &+ 1), seeds: Self.commandSeeds)

        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let logger = Logger(label: "agent-fuzz") { _ in SwiftLogNoOpLogHandler() }
        let client = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "fuzz-operator"), logger: logger)
        await client.start()
        let heard = Heard()
        var readers: [Task<Void, Never>] = []
        for (name, filter) in [
            ("errors", "\(vehicleTopic)/errors"), ("events", "\(vehicleTopic)/events"),
            ("detail", "\(vehicleTopic)/state/detail"),
            ("status", "\(vehicleTopic)/status"),
        ] {
            let messages = try await client.subscribe(filter)
            readers.append(Task { for await m in messages { heard.record(name, m.payload) } })
        }
        for (identifier, feature) in good {
            _ = try await client.publish("\(prefix)/geofences/\(identifier)", payload: feature, retain: true)
        }

        let drive = try GPXTrack.load(options.track)
        let driveSeconds = (drive.last?.time?.timeIntervalSince(drive.first?.time ?? .distantPast)) ?? 60
        let config: [String: Any] = [
            "fleet": "fuzz", "vehicle": "v1",
            "mqtt": ["host": "127.0.0.1", "port": broker.port],
            "replay": [
                "gpx": URL(fileURLWithPath: options.track).path,
                "speedFactor": max(0.01, driveSeconds / (options.seconds * 0.8)),
            ],
            "store": ["path": "state/agent.sqlite"],
            "places": ["enabled": false],
        ]
        let configURL = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: configURL)
        let pid = try LocalProcess.spawn(
            agentPath, ["run", "--config", configURL.path],
            standardError: directory.appendingPathComponent("agent.log").path)
        defer { LocalProcess.terminate(pid) }

        // Messages on `cmd` and the fuzzed geofences are not retained: they reach only an agent that has
        // subscribed, which it has by the time it says it is online.
        let waitedSince = ContinuousClock.now
        while !heard.saysOnline() {
            guard ContinuousClock.now - waitedSince < .seconds(60), kill(pid, 0) == 0 else {
                throw ValidationError("the agent did not come online (log: \(directory.path)/agent.log)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }

        // The barrage.
        var expectedGeofenceRefusals = Set<String>()
        var expectedCommandRefusals = 0
        var sent = (geofences: 0, commands: 0, good: 0)
        var held: [String] = []
        var deleted: [String] = []
        var rss: [(at: Double, megabytes: Double)] = []
        var alive = true
        let started = ContinuousClock.now
        var k = 0
        func elapsed() -> Double { seconds(ContinuousClock.now - started) }
        while elapsed() < options.seconds {
            k += 1
            let roll = Int.random(in: 0..<100, using: &mutator.random)
            if roll < 70 {
                let identifier = "fz-\(k)"
                let topic = roll < 35 ? "\(prefix)/geofences/\(identifier)" : "\(vehicleTopic)/geofences/\(identifier)"
                let payload = Self.replacingIdentifier(mutator.next(), with: identifier)
                if case .failure = GeofenceMessage.change(topic: topic, payload: payload) {
                    expectedGeofenceRefusals.insert(topic)
                }
                _ = try await client.publish(topic, payload: payload)
                sent.geofences += 1
            } else if roll < 90 {
                let payload = commands.next()
                if case .failure = AgentCommand.parse(payload) { expectedCommandRefusals += 1 }
                _ = try await client.publish("\(vehicleTopic)/cmd", payload: payload)
                sent.commands += 1
            } else if roll < 96 || held.isEmpty {
                let identifier = "ok-\(k)"
                let feature =
                    #"{"type":"Feature","id":"\#(identifier)","geometry":{"type":"Point","coordinates":[\#(10 + Double(k % 1000) * 0.01),10]},"properties":{"radius":50}}"#
                _ = try await client.publish(
                    "\(prefix)/geofences/\(identifier)", payload: Array(feature.utf8), retain: true)
                held.append(identifier)
                sent.good += 1
            } else {
                let identifier = held.remove(at: Int.random(in: 0..<held.count, using: &mutator.random))
                _ = try await client.publish("\(prefix)/geofences/\(identifier)", payload: [], retain: true)
                deleted.append(identifier)
            }
            if rss.last.map({ elapsed() - $0.at >= 5 }) ?? true {
                alive = alive && kill(pid, 0) == 0
                rss.append((elapsed(), residentMegabytes(of: pid)))
            }
            try await Task.sleep(for: .seconds(1 / options.rate))
        }

        // Let the answers and the rest of the drive arrive.
        let goodIdentifiers = Set(good.map(\.0))
        let settle = ContinuousClock.now
        while ContinuousClock.now - settle < .seconds(60) {
            let refusalsIn = Set(heard.errors(kind: "geofence")).isSuperset(of: expectedGeofenceRefusals)
            let commandsIn = heard.errors(kind: "command").count >= expectedCommandRefusals
            if refusalsIn, commandsIn, heard.transitions(of: goodIdentifiers).count >= expectedEvents.count { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        // Only the pages that answer this last request count: earlier ones list what was held then.
        let detailBefore = heard.count("detail")
        _ = try await client.publish("\(vehicleTopic)/cmd", payload: Array(#"{"command":"reportState"}"#.utf8))
        try await Task.sleep(for: .seconds(3))
        alive = alive && kill(pid, 0) == 0
        let stopStarted = ContinuousClock.now
        kill(pid, SIGTERM)
        var status: Int32 = 0
        var stopped = false
        while ContinuousClock.now - stopStarted < .seconds(10) {
            if waitpid(pid, &status, WNOHANG) == pid {
                stopped = true
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let stopSeconds = seconds(ContinuousClock.now - stopStarted)
        await client.shutdown()
        for r in readers { r.cancel() }

        let receivedRefusals = Set(heard.errors(kind: "geofence"))
        let missing = expectedGeofenceRefusals.subtracting(receivedRefusals)
        let unexpected = receivedRefusals.subtracting(expectedGeofenceRefusals)
        let commandRefusals = heard.errors(kind: "command").count
        let transitions = heard.transitions(of: goodIdentifiers)
        let inDetail = heard.detailIdentifiers(after: detailBefore)
        let heldMissing = held.filter { !inDetail.contains($0) }
        let deletedPresent = deleted.filter { inDetail.contains($0) }
        let goodMissing = goodIdentifiers.filter { !inDetail.contains($0) }
        let firstMinute = rss.filter { $0.at < 60 }.map(\.megabytes).max() ?? -1
        let lastMinute = rss.filter { $0.at >= options.seconds - 60 }.map(\.megabytes).max() ?? -1
        let exitedCleanly = stopped && (status & 0x7f) == 0 && ((status >> 8) & 0xff) == 0
        let passed =
            alive && exitedCleanly && stopSeconds < 5 && missing.isEmpty && unexpected.isEmpty
            && commandRefusals == expectedCommandRefusals && transitions == expectedEvents
            && heldMissing.isEmpty && deletedPresent.isEmpty && goodMissing.isEmpty
        let line = jsonLine([
            ("scenario", "agent-fuzz"), ("seconds", rounded(options.seconds, 0)),
            ("seed", Int(truncatingIfNeeded: options.seed)),
            ("geofences_sent", sent.geofences), ("geofence_refusals_due", expectedGeofenceRefusals.count),
            ("geofence_refusals_missing", missing.count), ("geofence_refusals_unexpected", unexpected.count),
            ("commands_sent", sent.commands), ("command_refusals_due", expectedCommandRefusals),
            ("command_refusals_heard", commandRefusals),
            ("good_pushed", sent.good), ("good_deleted", deleted.count), ("good_held_missing", heldMissing.count),
            ("good_deleted_present", deletedPresent.count),
            ("transitions_expected", expectedEvents.count), ("transitions_heard", transitions.count),
            ("transitions_match", transitions == expectedEvents),
            ("agent_up", alive), ("stop_s", rounded(stopSeconds, 2)), ("exit_clean", exitedCleanly),
            ("rss_first_minute_mb", rounded(firstMinute, 1)), ("rss_last_minute_mb", rounded(lastMinute, 1)),
            ("rss_max_mb", rounded(rss.map(\.megabytes).max() ?? -1, 1)), ("passed", passed),
        ])
        if !passed {
            FileHandle.standardError.write(
                Data(
                    "agent-fuzz: missing refusals \(missing.sorted().prefix(5)), unexpected \(unexpected.sorted().prefix(5)); transitions heard \(transitions.prefix(8)) expected \(expectedEvents.prefix(8)); held missing \(heldMissing.prefix(5)), deleted present \(deletedPresent.prefix(5)), good missing \(goodMissing.sorted())\n"
                        .utf8))
        }
        return Result(line: line, passed: passed)
    }

    /// The seeds of the geofence mutations: each good feature and each corpus file, with its id replaced
    /// by a placeholder that each message then names.
    func geofenceSeeds(good: [(String, [UInt8])]) throws -> [[UInt8]] {
        var seeds = good.map { Self.replacingIdentifier($0.1, with: "FZID") }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: options.corpus))?.sorted() ?? [] {
            seeds.append(Array(try Data(contentsOf: URL(fileURLWithPath: options.corpus).appendingPathComponent(name))))
        }
        return seeds
    }

    static let commandSeeds: [[UInt8]] = [
        "reportLocation", "reportState", "startLiveUpdates", "stopLiveUpdates", "resync",
        #"{"command":"reportState","monitor":"default"}"#, #"{"command":"reportLocation"}"#, "selfDestruct",
    ].map { Array($0.utf8) }

    /// Each Feature of a FeatureCollection (or the one Feature), as its id and its bytes.
    static func features(of bytes: [UInt8]) throws -> [(String, [UInt8])] {
        guard case .object(let top) = try JSONParser.parse(bytes) else {
            throw ValidationError("the conditions are not a GeoJSON object")
        }
        let features: [JSONValue] = if case .array(let list)? = top["features"] { list } else { [.object(top)] }
        return features.compactMap { f in
            guard case .string(let id)? = f["id"] else { return nil }
            return (id, Array(f.jsonText.utf8))
        }
    }

    /// The payload with its first `"id":"..."` naming `identifier` (a mutation may have broken it; then as it is).
    static func replacingIdentifier(_ payload: [UInt8], with identifier: String) -> [UInt8] {
        let text = String(decoding: payload, as: UTF8.self)
        guard let key = text.range(of: #""id":""#), let end = text[key.upperBound...].firstIndex(of: "\"") else {
            return payload
        }
        return Array((text[..<key.upperBound] + identifier + text[end...]).utf8)
    }
}

/// A transition as `simulate` prints it and the agent publishes it.
struct Transition: Equatable, CustomStringConvertible {
    var identifier: String
    var event: String
    var time: String

    init?(_ bytes: [UInt8]) {
        guard let o = try? JSONParser.parse(bytes), case .string(let id)? = o["identifier"],
            case .string(let event)? = o["event"],
            case .string(let time)? = o["time"]
        else { return nil }
        (identifier, self.event, self.time) = (id, event, time)
    }

    var description: String { "\(identifier) \(event) \(time)" }

    /// What `geofence-agent simulate` gives for the conditions on the track (its JSON lines, kept in
    /// `directory`): the reference a run through the real agent is checked against.
    static func simulated(agentPath: String, conditions: String, track: String, directory: URL, within limit: Double)
        throws -> [Transition]
    {
        let out = directory.appendingPathComponent("simulate.jsonl").path
        let pid = try LocalProcess.spawn(
            agentPath, ["simulate", "--conditions", conditions, "--track", track, "--accuracy", "5"],
            standardOutput: out)
        guard LocalProcess.reap(pid, within: limit) else {
            throw ValidationError("simulate did not finish within \(limit) s")
        }
        return try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").compactMap {
            Transition(Array($0.utf8))
        }
    }
}

/// What the run's subscriber heard, from its reader tasks.
private final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String: [[UInt8]]] = [:]

    func record(_ kind: String, _ payload: [UInt8]) {
        lock.lock()
        messages[kind, default: []].append(payload)
        lock.unlock()
    }

    private func all(_ kind: String) -> [[UInt8]] {
        lock.lock()
        defer { lock.unlock() }
        return messages[kind] ?? []
    }

    /// The topics of the `errors` messages of one kind.
    func errors(kind: String) -> [String] {
        all("errors").compactMap { p in
            guard let o = try? JSONParser.parse(p), o["kind"] == .string(kind), case .string(let topic)? = o["topic"]
            else { return nil }
            return topic
        }
    }

    func transitions(of identifiers: Set<String>) -> [Transition] {
        all("events").compactMap { Transition($0) }.filter { identifiers.contains($0.identifier) }
    }

    /// Every condition identifier the state detail's pages name.
    func count(_ kind: String) -> Int { all(kind).count }

    func saysOnline() -> Bool {
        all("status").contains { (try? JSONParser.parse($0))?["status"] == .string("online") }
    }

    func detailIdentifiers(after skipped: Int) -> Set<String> {
        var found = Set<String>()
        func walk(_ v: JSONValue) {
            switch v {
            case .object(let o):
                if case .string(let id)? = o["identifier"] { found.insert(id) }
                o.values.forEach(walk)
            case .array(let a): a.forEach(walk)
            default: break
            }
        }
        for page in all("detail").dropFirst(skipped) { if let v = try? JSONParser.parse(page) { walk(v) } }
        return found
    }
}
