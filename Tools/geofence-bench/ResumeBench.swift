import ArgumentParser
import BenchFigures
import Foundation
import GeofenceCore
import GeofenceStore
import Logging

/// `geofence-bench resume`: restoring a monitor of 100,000 conditions from the store and evaluating the
/// first fix, as after a crash.
struct ResumeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Measure restoring a monitor of many conditions from the store, then its first fix.",
        discussion: """
            Builds a store with N conditions (half circles, half polygons of 8-64 vertices, scattered over \
            1,000 km), every one with a record, as an agent leaves it. Then, in fresh child processes, times \
            opening the store, restoring the monitor and evaluating the first fix, and prints the median:

            {"scenario": "resume", "conditions": 100000, "restore_ms": ..., "refine_ms": ...}

            As the agent does, the index answers from the regions' boxes at first; `refine_ms` is the work \
            done after the first fix to add the octagons and masks (on a thread of its own in the agent). \
            --refine-at-once does that work inside the restore, as before.

            The file stays in the page cache between runs, as after a crash and restart of the agent (not a \
            cold boot).

            Example:
              swift build -c release && .build/release/geofence-bench resume
            """
    )

    @Option(help: "Conditions in the monitor.")
    var conditions = 100_000

    @Option(help: "Timed restores, each in its own process.")
    var rounds = 5

    @Option(help: "Restore this store once and print the timing (used by the parent run).")
    var restore: String?

    @Flag(help: "Keep the built store and print its path (for profiling a restore).")
    var keep = false

    @Flag(help: "Work out the index's octagons and masks inside the restore, not after the first fix.")
    var refineAtOnce = false

    func run() async throws {
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let scenario = Scenario(spanKilometres: 1000)
        if let restore {
            let start = nowNanoseconds()
            let store = try await AgentStore.open(path: restore, logger: logger)
            let opened = nowNanoseconds()
            // Every fix alone: this measures the restore, and the one fix after it must decide at once.
            var engine = try await store.openMonitor(
                "fleet", configuration: .eachFixAlone, refineIndexLater: !refineAtOnce)
            let restored = nowNanoseconds()
            // The vehicle is 20 m on from where it was when the agent stopped, a second later.
            guard let last = engine.lastAcceptedFix else { throw ValidationError("the store has no last fix") }
            let next = Coordinate(
                latitude: last.coordinate.latitude + 20 / 111_200, longitude: last.coordinate.longitude)
            let outcome = engine.process(
                Location(coordinate: next, horizontalAccuracy: 5, timestamp: last.timestamp.addingTimeInterval(1)))
            let done = nowNanoseconds()
            guard case .accepted = outcome, engine.count == conditions else {
                throw ValidationError("restore went wrong: \(outcome), \(engine.count) conditions")
            }
            if let work = engine.indexRefinementWork(), let refinement = work() {
                guard engine.adoptIndexRefinement(refinement) else { throw ValidationError("refinement refused") }
            }
            let refined = nowNanoseconds()
            print(
                "\(Double(done - start) / 1e6) \(Double(opened - start) / 1e6) \(Double(restored - opened) / 1e6) \(Double(done - restored) / 1e6) \(Double(refined - done) / 1e6)"
            )
            await store.close()
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "resume-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(at: directory) } }
        let path = directory.appendingPathComponent("agent.sqlite").path
        let built = try await build(path: path, scenario: scenario, logger: logger)
        if keep { FileHandle.standardError.write(Data("store: \(path)\n".utf8)) }
        var runs: [[Double]] = []
        for _ in 0..<rounds {
            let line = try runChild(
                ["resume", "--conditions", "\(conditions)", "--restore", path]
                    + (refineAtOnce ? ["--refine-at-once"] : []))
            runs.append(line.split(separator: " ").compactMap { Double($0) })
        }
        func median(_ i: Int) -> Double { Statistics.median(runs.map { $0[i] }) }
        print(
            jsonLine([
                "scenario": "resume", "conditions": conditions, "restore_ms": rounded(median(0), 1),
                "open_ms": rounded(median(1), 1), "monitor_ms": rounded(median(2), 1),
                "first_fix_ms": rounded(median(3), 2), "refine_ms": rounded(median(4), 1),
                "refined": refineAtOnce ? "in the restore" : "after the first fix",
                "rounds": rounds, "store_mb": rounded(built.megabytes, 1), "build_s": rounded(built.seconds, 1),
            ]))
    }

    /// A store as an agent leaves it: every condition stored and decided by a first fix.
    private func build(path: String, scenario: Scenario, logger: Logger) async throws -> (
        seconds: Double, megabytes: Double
    ) {
        let start = nowNanoseconds()
        let store = try await AgentStore.open(path: path, logger: logger)
        let list = scenario.conditions(count: conditions, seed: 7)
        _ = try await store.putConditions(
            list.enumerated().map { k, c in
                .init(monitor: "fleet", identifier: "c\(k)", condition: c, definition: "{}", source: "bench")
            })
        var engine = try await store.openMonitor("fleet", configuration: .eachFixAlone)
        var rng = SplitMix64(seed: 5)
        let outcome = engine.process(
            Location(
                coordinate: scenario.randomPoint(&rng), horizontalAccuracy: 5,
                timestamp: Date(timeIntervalSince1970: 1_700_000_000)))
        let changed = Set(outcome.events.map(\.identifier))
        _ = try await store.commit(
            monitor: "fleet", records: engine.records.filter { changed.contains($0.identifier) },
            lastFix: engine.lastAcceptedFix, indexFloor: engine.indexFloor)
        await store.close()
        let bytes = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return (Double(nowNanoseconds() - start) / 1e9, Double(bytes) / 1_048_576)
    }

    private func runChild(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("restore child failed") }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
