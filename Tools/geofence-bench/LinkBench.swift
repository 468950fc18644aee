import ArgumentParser
import Foundation
import LocalServers

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-bench link`: how late transitions arrive over a cellular-like link, through the real agent.
struct LinkBench: ParsableCommand {  // blocking waits for processes: not on the cooperative pool
    static let configuration = CommandConfiguration(
        commandName: "link",
        abstract: "Measure transition delays over clean, cellular and bad links, live updates on.",
        discussion: """
            The agent replays the budget's half-hour drive (14 circles, 1 Hz) at --speed-factor, live updates \
            on, over a link between two network namespaces of our own whose relay delays, reorders, drops and \
            cuts (`CellularLink`; needs root): clean; cellular (150 ± 100 ms, 5% loss, 20 s outages every \
            60 s); bad (600 ± 400 ms, 20% loss, 45 s outages every 90 s), the outages counted from the agent's \
            first TCP packet. The broker is mosquitto with its default Receive Maximum (20 messages in flight), \
            or --broker-inflight's (deploy/mosquitto-fleet.conf: 100). The agent runs on after the replay \
            until every transition is heard or --patience runs out. A transition's delay is its arrival at a \
            subscriber beside the broker less the moment the replay made it (the replay's clock set by the \
            least delayed transition, so each delay is understated by that one's, at most a link's latency):

            {"scenario": "link", "profile": "bad", "broker_inflight": 20, "transitions": 50, "heard": 50, \
            "delay_p50_s": ..., "delay_p95_s": ..., "delay_max_s": ...}

            Example:
              swift build -c release && sudo .build/release/geofence-bench link
            """
    )

    @Option(help: "Fixes in the replay (1 Hz).")
    var fixes = 1_800

    @Option(help: "How much faster than real time the replay runs.")
    var speedFactor = 10.0

    @Option(help: "Seconds to wait for the last transitions after the replay.")
    var patience = 300.0

    @Option(help: "Profiles to run: clean, cellular, bad.")
    var profiles = ["clean", "cellular", "bad"]

    @Option(help: "The broker's Receive Maximum (mosquitto's max_inflight_messages, 0: no limit); its default is 20.")
    var brokerInflight: Int?

    @OptionGroup var agent: AgentExecutable

    func validate() throws {
        guard getuid() == 0 else { throw ValidationError("the link's namespaces need root") }
        if let brokerInflight, !(0...65_535).contains(brokerInflight) {
            throw ValidationError("--broker-inflight \(brokerInflight): mosquitto takes 0 (no limit) to 65535")
        }
    }

    func run() throws {
        UndoOnSignal.install()  // a stopped bench leaves none of its processes, namespaces or files
        let agentPath = try agent.path()
        let known: [String: CellularLink.Profile] = ["clean": .clean, "cellular": .cellular, "bad": .bad]
        // The transitions a clean run hears: what every profile must deliver.
        var expected: Int?
        for name in profiles {
            guard let profile = known[name] else { throw ValidationError("no profile \(name)") }
            var run = BudgetRun(
                agentPath: agentPath, fixes: fixes, driving: true, liveUpdates: true, speedFactor: speedFactor,
                link: true)
            run.profile = profile
            run.awaitTransitions = expected ?? 50
            run.patience = patience
            run.brokerInflight = brokerInflight
            let result = try run.measure()
            if name == "clean" { expected = result.transitions }
            let made = result.arrivals.map { ($0.at, $0.time.timeIntervalSince1970 / speedFactor) }
            let offset = made.map { $0.0 - $0.1 }.min() ?? 0
            let delays = made.map { $0.0 - $0.1 - offset }.sorted()
            func q(_ p: Double) -> Double {
                delays.isEmpty ? .nan : delays[min(delays.count - 1, Int(p * Double(delays.count)))]
            }
            print(
                jsonLine([
                    ("scenario", "link"), ("profile", name), ("speed_factor", speedFactor),
                    ("broker_inflight", brokerInflight ?? 20),
                    ("transitions", expected ?? result.transitions), ("heard", result.transitions),
                    ("delay_p50_s", rounded(q(0.5), 1)), ("delay_p95_s", rounded(q(0.95), 1)),
                    ("delay_max_s", rounded(delays.last ?? .nan, 1)),
                    ("wire_kb", rounded(Double((result.wire?.up ?? 0) + (result.wire?.down ?? 0)) / 1024, 1)),
                ]))
        }
    }
}
