import ArgumentParser
import Foundation
import GeofenceCore

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-bench decision-cold`: what the pure core's decision of one fix costs after the thread slept, as
/// an agent's does between fixes, split into what its code's misses cost and what its data's do.
struct ColdDecisionBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decision-cold",
        abstract: "Time the pure core's decision of a fix after a sleep: cold, with its code warmed, and warm.",
        discussion: """
            A `MonitorSet` holding the budget's 14 circles decides the budget's drive, one fix at a time, timed \
            around `process` alone on the monotonic clock. Three ways, in rounds of --fixes each, one after \
            another in the same process:
              cold: the thread sleeps --milliseconds in poll before each fix (an agent's wait for the next);
              code-warm: the same sleep, then a twin set (the same circles, its own state) decides the fix \
            before the timed one does: the code is in cache, the timed set's data is not;
              warm: no sleep.
            The difference between cold and code-warm is what the code's cache misses cost a fix; between \
            code-warm and warm, the data's. One JSON line per way:
            {"scenario": "decision-cold", "caches": "cold", "sleep_ms": 20, "fixes": 900, "p50_us": ..., \
            "p90_us": ..., "mean_us": ...}

            Example:
              swift build -c release && .build/release/geofence-bench decision-cold
            """
    )

    @Option(help: "Fixes each way decides in a round.")
    var fixes = 300

    @Option(help: "Rounds of the three ways.")
    var rounds = 3

    @Option(help: "Milliseconds the thread sleeps before each fix of the cold and code-warm ways.")
    var milliseconds: Int32 = 20

    enum Caches: String, CaseIterable {
        case cold
        case codeWarm = "code-warm"
        case warm
    }

    func run() throws {
        let (definitions, locations) = try ReferenceDecision.drive(fixes: fixes, driving: true)
        func monitors() -> MonitorSet { ReferenceDecision.monitors(definitions) }

        var times: [Caches: [UInt64]] = [:]
        // The steps are counted and printed so that no decision can be optimised away.
        var steps = 0
        for _ in 0..<rounds {
            for caches in Caches.allCases {
                var timed = monitors()
                var twin = monitors()
                for location in locations {
                    if caches != .warm { _ = poll(nil, 0, milliseconds) }
                    if caches == .codeWarm { steps &+= twin.process(location).steps.count }
                    let start = nowNanoseconds()
                    steps &+= timed.process(location).steps.count
                    times[caches, default: []].append(nowNanoseconds() - start)
                }
            }
        }
        for caches in Caches.allCases {
            let sorted = (times[caches] ?? []).sorted()
            let mean = Double(sorted.reduce(0, +)) / Double(max(sorted.count, 1))
            print(
                jsonLine([
                    "scenario": "decision-cold", "caches": caches.rawValue,
                    "sleep_ms": caches == .warm ? 0 : Int(milliseconds), "fixes": sorted.count,
                    "p50_us": rounded(quantile(sorted, 0.5) / 1000, 2),
                    "p90_us": rounded(quantile(sorted, 0.9) / 1000, 2),
                    "mean_us": rounded(mean / 1000, 2), "steps": steps,
                ]))
            fflush(nil)
        }
    }
}
