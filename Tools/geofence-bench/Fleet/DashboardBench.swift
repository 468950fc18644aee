import ArgumentParser
import FleetSimulation
import Foundation
import LocalServers

/// `geofence-bench dashboard`: the dashboard in headless Chromium (Playwright) against a real mosquitto fed
/// by the simulated fleet, at several fleet sizes and with ten pages at once (scripts/measure-dashboard.py
/// measures inside the browser).
struct DashboardBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Measure the dashboard with a simulated fleet: frame times, heap, messages, lag.",
        discussion: """
            For each fleet size, one page; then --fan-out pages at once on the same broker. Prints one line \
            per run: {"scenario": "dashboard", "vehicles": ..., "pages": ..., "frame_ms_p95": ..., \
            "heap_mb_max": ..., "handled_per_s": [...], "lag_ms_p50_first_half": [...], \
            "lag_ms_p50_second_half": [...], "move_ms_p95": ..., "published_per_s": ...}. Screenshots go to \
            --output. Needs scripts/setup --test (Chromium and Playwright).

            Example:
              swift run -c release geofence-bench dashboard --vehicles 100,1000,5000
            """
    )

    @Option(help: "Fleet sizes, comma-separated.")
    var vehicles = "100,1000,5000"

    @Option(help: "Geofences pushed to the fleet.")
    var geofences = 10_000

    @Option(help: "Seconds of panning and zooming measured per run.")
    var seconds = 30.0

    @Option(help: "Pages open at once in the fan-out run (0: none).")
    var fanOut = 10

    @Option(help: "The fleet sizes of the fan-out runs, comma-separated.")
    var fanOutVehicles = "300,1000"

    @Option(help: "The dashboard's directory.")
    var site = "dashboard"

    @Option(help: "Where the screenshots go.")
    var output = ".build/bench-output/dashboard"

    func run() async throws {
        UndoOnSignal.install()  // a stopped bench leaves none of its processes, namespaces or files
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        var runs = try Self.sizes(vehicles, "--vehicles").map { ($0, 1) }
        if fanOut > 1 { runs += try Self.sizes(fanOutVehicles, "--fan-out-vehicles").map { ($0, fanOut) } }
        for (count, pages) in runs {
            print(try await measure(vehicles: count, pages: pages))
        }
    }

    private static func sizes(_ list: String, _ option: String) throws -> [Int] {
        try list.split(separator: ",").map { part in
            guard let n = Int(part.trimmingCharacters(in: .whitespaces)), n > 0 else {
                throw ValidationError("\(option): \"\(part)\" is not a number of vehicles")
            }
            return n
        }
    }

    private func measure(vehicles count: Int, pages: Int) async throws -> String {
        let broker = try LocalMosquitto()
        broker.logsEveryMessage = false
        let web = try broker.addWebSocketListener(httpDirectory: URL(fileURLWithPath: site).path)
        try broker.start()
        defer { broker.stop() }
        var settings = FleetSimulationSettings(vehicles: count, geofences: geofences)
        settings.fleet = "sim"
        let session = try await FleetSession(settings: settings, port: broker.port)
        let started = ContinuousClock.now
        let publishing = Task { try await session.run(seconds: 3600) }
        defer { publishing.cancel() }  // also when the script fails
        let screenshot = "\(output)/dashboard-\(count)-vehicles-\(pages)-pages.png"
        let line = try await Self.runScript([
            "scripts/measure-dashboard.py", "http://127.0.0.1:\(web)/?fleet=sim", String(count), String(geofences),
            String(pages), String(seconds), screenshot,
        ])
        publishing.cancel()
        let totals = try await publishing.value
        let elapsed = (ContinuousClock.now - started) / .seconds(1)
        await session.finish()
        let published = Double(totals.messages) / elapsed
        return #"{"scenario": "dashboard", "published_per_s": \#(Int(published)), "late_slots": \#(totals.lateSlots), "#
            + #""screenshot": "\#(screenshot)", "# + line.dropFirst()
    }

    /// Runs the measuring script and returns its JSON line; its standard error passes through.
    private static func runScript(_ arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard status == 0, let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{") }) else {
            throw ValidationError("measure-dashboard.py exited with \(status): \(text.suffix(2000))")
        }
        return String(line)
    }
}
