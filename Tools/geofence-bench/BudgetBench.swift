import AgentFormats
import ArgumentParser
import Foundation
import LocalServers

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-bench budget`: what one fix costs a vehicle, through the real agent: CPU, storage and data.
struct BudgetBench: ParsableCommand {  // blocking waits for processes: not on the cooperative pool
    static let configuration = CommandConfiguration(
        commandName: "budget",
        abstract: "Measure the agent's CPU time, storage writes and wire bytes per fix, driving and parked.",
        discussion: """
            The real agent replays a half-hour drive at 1 Hz through 14 circles, and a vehicle parked as long, \
            with live updates on and off, geofences already stored, the store on disk. CPU time comes from the \
            agent's reaping (user + system, to the microsecond), storage from /proc/PID/io (write_bytes), read \
            as the agent exits; bytes on the wire (IP bytes, both ways) from the vehicle's interface of a clean \
            link between two network namespaces of our own (needs root; else "wire" is null). Each figure is \
            the run's total less a run of the same configuration over 2 fixes (start, connect, stop), divided \
            by the fixes in between. At 20x a timer of the agent's that runs once a second counts once per 20 \
            fixes: --speed-factor 1 counts it at a vehicle's pace. Two last runs keep the agent parked in real \
            time, for 60 s and for --idle-seconds (16 min: the heartbeats of 15 min come in it); their \
            difference is what an hour parked costs (keepalive, heartbeat, the parked location, every timer), \
            free of the start and the stop, and its CPU a second is what a fix at 1 Hz costs in all. Before each \
            run, 100 bare timed wakes of a thread at the run's interval between fixes (20 s of them at a slower \
            pace) give what one wake costs this machine at that moment (`reference_wake_us`): on a VM it moves \
            with the host's load, and an agent pays at least one a fix. Before each real-time run, 40 s of the \
            same drive decided by the pure core alone (the monitors, the motion check, the trip detector) on a \
            thread that sleeps in poll between fixes give the floor of a fix at 1 Hz (`reference_decision_us`, \
            its wake included): what deciding costs at that pace before anything is stored, sent or reported.

            {"scenario": "budget", "motion": "driving", "live_updates": true, "fixes": 1800, \
            "cpu_us_per_fix": ..., "storage_bytes_per_fix": ..., "wire_up_bytes_per_fix": ..., \
            "reference_wake_us": ..., ...}
            {"scenario": "budget-real-time", "motion": "driving", "live_updates": false, \
            "cpu_us_per_second": ..., "reference_wake_us": ..., "reference_decision_us": ...}
            {"scenario": "budget-idle", "seconds": 900, "cpu_us_per_second": ..., "wire_kb_per_hour": ..., ...}

            Example:
              swift build -c release && sudo .build/release/geofence-bench budget
            """
    )

    @Option(help: "Fixes in each replay (1 Hz).")
    var fixes = 1_800

    @Option(help: "How much faster than real time the replays run.")
    var speedFactor = 20.0

    @Option(help: "Seconds of the long real-time parked run, less a 60 s one (0: none).")
    var idleSeconds = 960

    func validate() throws {
        if idleSeconds != 0 && idleSeconds <= Self.shortIdleSeconds {
            throw ValidationError("--idle-seconds must be 0 or above \(Self.shortIdleSeconds)")
        }
    }

    @Option(help: "Seconds of CPU sampled in each real-time run (a fix a second), after 30 s of warm-up (0: none).")
    var realTimeSeconds = 120

    @Flag(help: "Run over loopback, with no link (no wire figures).")
    var noLink = false

    @Flag(help: "Only the driving run with live updates on (and its base), for a quick look at the wire.")
    var drivingLiveOnly = false

    @Flag(help: "Only the parked hour in real time.")
    var idleOnly = false

    @Flag(help: "Only the real-time runs (driving and parked, a fix a second).")
    var realTimeOnly = false

    @Option(help: "The broker: mosquitto (MQTT 5), or nats (three nodes, MQTT 3.1.1, one session).")
    var broker: BenchBrokerKind = .mosquitto

    @Option(help: "A JSON object merged into each run's config.json (for example the track's batch size).")
    var agentConfig: String?

    @OptionGroup var agent: AgentExecutable

    func run() throws {
        UndoOnSignal.install()  // a stopped bench leaves none of its processes, namespaces or files
        let agentPath = try agent.path()
        let extra =
            try agentConfig.map { text -> [String: Any] in
                guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                    throw ValidationError("--agent-config is not a JSON object: \(text)")
                }
                return object
            } ?? [:]
        let useLink = !noLink && getuid() == 0
        if !noLink && !useLink {
            FileHandle.standardError.write(Data("not root: no link, so no wire figures\n".utf8))
        }
        // A `liveUpdates` object in --agent-config replaces the runs' own: run and label what it says.
        let forcedLive = (extra["liveUpdates"] as? [String: Any])?["startedByDefault"] as? Bool
        let lives: [Bool] = idleOnly ? [] : forcedLive.map { [$0] } ?? (drivingLiveOnly ? [true] : [true, false])
        for live in realTimeOnly ? [] : lives {
            let base = try BudgetRun(
                agentPath: agentPath, fixes: 2, driving: true, liveUpdates: live, speedFactor: speedFactor,
                link: useLink, extraConfig: extra, broker: broker
            ).measure()
            for driving in drivingLiveOnly ? [true] : [true, false] {
                let wake = Self.referenceWake(at: speedFactor)
                let run = try BudgetRun(
                    agentPath: agentPath, fixes: fixes, driving: driving, liveUpdates: live,
                    speedFactor: speedFactor, link: useLink, extraConfig: extra, broker: broker
                ).measure()
                var line = perFix(run, base, driving: driving, live: live)
                line.append(("reference_wake_us", rounded(wake, 1)))
                print(jsonLine(line))
            }
        }
        if realTimeSeconds > 0, !drivingLiveOnly, !idleOnly {
            for live in lives {
                for driving in [true, false] {
                    print(jsonLine(try realTime(driving: driving, live: live, agentPath: agentPath, useLink, extra)))
                }
            }
        }
        if idleSeconds > 0, !drivingLiveOnly, !realTimeOnly {
            // Two parked runs in real time, short and long: their difference is the steady cost of being
            // parked (keepalives, heartbeats, the parked location, timers), free of what a start and a stop
            // cost.
            func parked(_ seconds: Int) throws -> BudgetRun.Result {
                try BudgetRun(
                    agentPath: agentPath, fixes: seconds, driving: false, liveUpdates: true, speedFactor: 1,
                    link: useLink, extraConfig: extra, broker: broker
                ).measure()
            }
            let short = try parked(Self.shortIdleSeconds)
            let long = try parked(idleSeconds)
            let perHour = 3600 / Double(idleSeconds - Self.shortIdleSeconds)
            let spend = long.spend - short.spend
            let wire = long.wire.flatMap { l in short.wire.map { s in (up: l.up - s.up, down: l.down - s.down) } }
            print(
                jsonLine([
                    "scenario": "budget-idle", "motion": "parked", "live_updates": true,
                    "seconds": idleSeconds - Self.shortIdleSeconds,
                    "cpu_ms_per_hour": rounded(spend.cpuMicroseconds / 1000 * perHour, 1),
                    // At 1 Hz, what a fix costs with everything the agent does each second.
                    "cpu_us_per_second": rounded(spend.cpuMicroseconds * perHour / 3600, 1),
                    "storage_kb_per_hour": rounded(spend.storageBytes / 1024 * perHour, 1),
                    "wire_kb_per_hour": wire.map { rounded(Double($0.up + $0.down) / 1024 * perHour, 1) }
                        ?? NSNull() as Any,
                ]))
        }
    }

    /// What one bare timed wake costs now at a replay's interval between fixes: 100 of them, or 20 s of them
    /// when fixes are further apart (20 at 1 Hz in real time).
    static func referenceWake(at speedFactor: Double) -> Double {
        ReferenceWake.cpuMicroseconds(
            wakes: min(100, max(10, Int(20 * speedFactor))), milliseconds: Int32(max(1, (1000 / speedFactor).rounded()))
        )
    }

    /// Warm-up of a real-time run before its CPU is sampled: the start, the connection, the index's refinement.
    static let realTimeWarmUp = 30.0

    /// A run at a vehicle's pace, a fix a second, with every timer of the agent at its own: its CPU a second
    /// within a window after the warm-up is what a fix costs in all.
    private func realTime(driving: Bool, live: Bool, agentPath: String, _ useLink: Bool, _ extra: [String: Any])
        throws -> [(String, Any)]
    {
        let wake = Self.referenceWake(at: 1)
        let decision = try ReferenceDecision.cpuMicrosecondsPerSecond(
            driving: driving, seconds: Self.referenceDecisionSeconds)
        let window = Self.realTimeWarmUp...(Self.realTimeWarmUp + Double(realTimeSeconds))
        let run = try BudgetRun(
            agentPath: agentPath, fixes: Int(window.upperBound) + 10, driving: driving, liveUpdates: live,
            speedFactor: 1, link: useLink, extraConfig: extra, broker: broker, window: window
        ).measure()
        guard let sample = run.window, sample.seconds > 0 else {
            throw ValidationError("the agent ended before its real-time run's window did")
        }
        return [
            ("scenario", "budget-real-time"), ("motion", driving ? "driving" : "parked"), ("live_updates", live),
            ("seconds", rounded(sample.seconds, 1)),
            ("cpu_us_per_second", rounded(sample.cpuMicroseconds / sample.seconds, 1)),
            ("reference_wake_us", rounded(wake, 1)),
            ("reference_decision_us", rounded(decision.microseconds, 1)),
        ]
    }

    /// Fixes a second apart that the pure core decides before each real-time run (`reference_decision_us`).
    static let referenceDecisionSeconds = 40

    /// The short parked run, subtracted from the long one.
    static let shortIdleSeconds = 60

    private func perFix(_ run: BudgetRun.Result, _ base: BudgetRun.Result, driving: Bool, live: Bool)
        -> [(String, Any)]
    {
        let n = Double(run.fixes - base.fixes)
        let spend = run.spend - base.spend
        var line: [(String, Any)] = [
            ("scenario", "budget"), ("motion", driving ? "driving" : "parked"), ("live_updates", live),
            ("fixes", run.fixes), ("speed_factor", speedFactor),
            ("cpu_us_per_fix", rounded(spend.cpuMicroseconds / n, 1)),
            ("storage_bytes_per_fix", rounded(spend.storageBytes / n, 0)),
            ("transitions", run.transitions),
            // The whole run's messages by topic, retained ones included: where the bytes go.
            (
                "topics",
                run.topics.mapValues { ["messages": $0.messages, "payload_bytes": $0.bytes] } as [String: Any]
            ),
        ]
        if let wire = run.wire, let baseWire = base.wire {
            let up = Double(wire.up - baseWire.up) / n
            let down = Double(wire.down - baseWire.down) / n
            line += [
                ("wire_up_bytes_per_fix", rounded(up, 1)), ("wire_down_bytes_per_fix", rounded(down, 1)),
                ("wire_kb_per_hour_at_1hz", rounded((up + down) * 3600 / 1024, 1)),
            ]
        } else {
            line.append(("wire_up_bytes_per_fix", NSNull()))
        }
        return line
    }
}
