import ArgumentParser
import Foundation
import GeofenceCore

/// `geofence-bench core`: containment per fix against 1,000 to 100,000 conditions, through the spatial
/// index and, in the same run, by a linear scan.
struct CoreBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "core",
        abstract: "Measure per-fix evaluation, index build time and memory of the geofence engine.",
        discussion: """
            Each scenario runs in a fresh child process so that its resident memory is its own, and prints:
            {"scenario": ..., "conditions": N, "span_km": S, "fixes": "random"|"track", "p50_us": ..., \
            "p99_us": ..., "build_s": ..., "rss_mb": ..., "linear_p50_us": ...}

            Example:
              swift run -c release geofence-bench core
            """
    )

    struct Spec {
        var name: String
        var conditions: Int
        var spanKilometres: Double
        var fixes: String
    }

    static let specs: [Spec] = [
        Spec(name: "sparse-random", conditions: 100_000, spanKilometres: 1000, fixes: "random"),
        Spec(name: "sparse-track", conditions: 100_000, spanKilometres: 1000, fixes: "track"),
        Spec(name: "dense-random", conditions: 100_000, spanKilometres: 100, fixes: "random"),
        Spec(name: "dense-track", conditions: 100_000, spanKilometres: 100, fixes: "track"),
        Spec(name: "sparse-random-1k", conditions: 1_000, spanKilometres: 1000, fixes: "random"),
        Spec(name: "sparse-random-10k", conditions: 10_000, spanKilometres: 1000, fixes: "random"),
        Spec(name: "sparse-track-1k", conditions: 1_000, spanKilometres: 1000, fixes: "track"),
        Spec(name: "monitor-sparse-track", conditions: 100_000, spanKilometres: 1000, fixes: "track"),
        // The fixed cost of a fix, whatever the conditions.
        Spec(name: "monitor-track-1", conditions: 1, spanKilometres: 1000, fixes: "track"),
    ]

    @Option(help: "Run one scenario in this process (used by the parent run).")
    var scenario: String?

    @Option(help: "Fixes timed through the index per scenario.")
    var fixes = 200_000

    @Option(help: "Fixes timed by linear scan per scenario.")
    var linearFixes = 300

    func run() throws {
        if let scenario {
            guard let spec = Self.specs.first(where: { $0.name == scenario }) else {
                throw ValidationError(
                    "unknown scenario '\(scenario)'; one of \(Self.specs.map(\.name).joined(separator: ", "))")
            }
            print(spec.name.hasPrefix("monitor-") ? measureMonitor(spec) : measure(spec))
            return
        }
        var p50: [String: Double] = [:]
        for spec in Self.specs {
            let line = try runChild(spec.name)
            print(line)
            fflush(nil)
            if let data = line.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let value = object["p50_us"] as? Double
            {
                p50[spec.name] = value
            }
        }
        for fixes in ["random", "track"] {
            if let small = p50["sparse-\(fixes)-1k"], let large = p50["sparse-\(fixes)"] {
                print(
                    jsonLine([
                        "scenario": "scaling", "fixes": fixes, "from_conditions": 1000, "to_conditions": 100_000,
                        "p50_ratio": rounded(large / small, 2),
                    ]))
            }
        }
    }

    private func runChild(_ name: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["core", "--scenario", name, "--fixes", "\(fixes)", "--linear-fixes", "\(linearFixes)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ExitCode(process.terminationStatus) }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func fixCoordinates(_ spec: Spec, _ world: Scenario, count: Int) -> [Coordinate] {
        spec.fixes == "track" ? world.trackFixes(count: count, seed: 2) : world.randomFixes(count: count, seed: 2)
    }

    private func measure(_ spec: Spec) -> String {
        let world = Scenario(spanKilometres: spec.spanKilometres)
        let conditions = world.conditions(count: spec.conditions, seed: 1)
        let regions = conditions.map(\.region)
        let buildStart = nowNanoseconds()
        let set = ConditionSet(regions)
        let buildSeconds = Double(nowNanoseconds() - buildStart) / 1e9
        let rss = residentMegabytes()

        let points = fixCoordinates(spec, world, count: fixes).map(PreparedPoint.init)
        var samples = [UInt64](repeating: 0, count: points.count)
        var found = 0
        for (i, p) in points.enumerated() {
            let start = nowNanoseconds()
            set.forEachContaining(p) { found &+= $0 &+ 1 }
            samples[i] = nowNanoseconds() - start
        }
        samples.sort()
        var linear = [UInt64](repeating: 0, count: min(linearFixes, points.count))
        var foundLinear = 0
        for i in linear.indices {
            let start = nowNanoseconds()
            foundLinear &+= set.containingByLinearScan(points[i]).count
            linear[i] = nowNanoseconds() - start
        }
        linear.sort()
        let contained = points.prefix(2000).reduce(0) { $0 + set.containing($1).count }
        return jsonLine([
            "scenario": spec.name, "conditions": spec.conditions, "span_km": spec.spanKilometres, "fixes": spec.fixes,
            "p50_us": rounded(quantile(samples, 0.5) / 1000), "p99_us": rounded(quantile(samples, 0.99) / 1000),
            "build_s": rounded(buildSeconds), "rss_mb": rounded(rss, 1),
            "linear_p50_us": rounded(quantile(linear, 0.5) / 1000, 1),
            "mean_containing": rounded(Double(contained) / Double(min(2000, points.count)), 2),
            "checksum": found &+ foundLinear,
        ])
    }

    /// The whole state machine per fix (filter, margins, records, crossings), after the first fix has
    /// decided every condition.
    private func measureMonitor(_ spec: Spec) -> String {
        let world = Scenario(spanKilometres: spec.spanKilometres)
        var engine = MonitorEngine(name: "bench")
        let buildStart = nowNanoseconds()
        for (i, c) in world.conditions(count: spec.conditions, seed: 1).enumerated() {
            engine.add(c, identifier: "c\(i)")
        }
        let buildSeconds = Double(nowNanoseconds() - buildStart) / 1e9
        let track = fixCoordinates(spec, world, count: fixes + 16)
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        func location(_ k: Int) -> Location {
            // Doppler speed, as gpsd reports it: the track moves at 5 to 40 m/s.
            let speed = k > 0 ? Geodesic.distance(track[k - 1], track[k]) : 10
            return Location(
                coordinate: track[k], horizontalAccuracy: 5, speed: speed, timestamp: base.addingTimeInterval(Double(k))
            )
        }
        // The first fixes show the vehicle moving; the one that does decides every condition at once.
        var warm = 0
        var events = 0
        var firstMilliseconds = 0.0
        while engine.motion == .unknown {
            let firstStart = nowNanoseconds()
            events += engine.process(location(warm)).events.count
            firstMilliseconds = Double(nowNanoseconds() - firstStart) / 1e6
            warm += 1
        }
        var samples = [UInt64](repeating: 0, count: fixes)
        for k in warm..<(warm + fixes) {
            let fix = location(k)
            let start = nowNanoseconds()
            events &+= engine.process(fix).events.count
            samples[k - warm] = nowNanoseconds() - start
        }
        samples.sort()
        return jsonLine([
            "scenario": spec.name, "conditions": spec.conditions, "span_km": spec.spanKilometres, "fixes": spec.fixes,
            "p50_us": rounded(quantile(samples, 0.5) / 1000), "p99_us": rounded(quantile(samples, 0.99) / 1000),
            "build_s": rounded(buildSeconds), "rss_mb": rounded(residentMegabytes(), 1),
            "first_fix_ms": rounded(firstMilliseconds, 1), "events": events,
        ])
    }
}
