import ArgumentParser
import BenchFigures
import Foundation
import LocalServers

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-bench gpsd`: the CPU the agent spends reading a real drive through gpsd, beside
/// `gpspipe -w` reading the same feed from the same kind of gpsd, alternated in one run.
struct GPSDBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gpsd",
        abstract: "Measure the agent's CPU reading gpsd against gpspipe -w on the same feed.",
        discussion: """
            Each round starts a gpsd on a free loopback port fed losslessly with the log, runs one client until \
            the whole log has gone through and its output has been quiet for 0.5 s, stops it, and reads the \
            client's user+system CPU time from wait4. The agent is `geofence-agent locations --json` (libgps, \
            coalescing, filters, one JSON line per location); the reference is `gpspipe -w` (gpsd-clients, \
            installed by `scripts/setup --bench`). Rounds alternate the two; medians are printed:

            {"scenario": "gpsd-cpu", "agent_cpu_s": ..., "gpspipe_cpu_s": ..., "ratio": ...}

            It also prints each client's CPU for starting and connecting alone (to a gpsd without receivers) \
            and net_ratio, the ratio with that start-up subtracted: what the agent spends per report.

            Example:
              swift build -c release && .build/release/geofence-bench gpsd
            """
    )

    @Option(help: "The receiver log to replay.")
    var log = "Tests/Support/GPSDTestSupport/Fixtures/gpsd-logs/bundg_zeus_9.log"

    @OptionGroup var agent: AgentExecutable

    @Option(help: "Feed the log this many times over in each round, so that start-up weighs little.")
    var repeats = 10

    @Option(help: "Rounds of (agent, gpspipe), alternated.")
    var rounds = 5

    func validate() throws {
        guard FileManager.default.fileExists(atPath: log) else {
            throw ValidationError("--log: no such file \(log) (run from the repository root)")
        }
        guard LocalGPSD.isInstalled else { throw ValidationError("gpsd is not installed: run scripts/setup") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gpspipe") else {
            throw ValidationError("gpspipe is not installed: run scripts/setup --bench")
        }
        guard rounds > 0 else { throw ValidationError("--rounds must be positive") }
    }

    func run() throws {
        UndoOnSignal.install()  // a stopped bench leaves none of its processes, namespaces or files
        let agentPath = try agent.path()
        var agentCPU: [Double] = []
        var pipeCPU: [Double] = []
        var agentSystem: [Double] = []
        var pipeSystem: [Double] = []
        var ratios: [Double] = []
        var agentStart: [Double] = []
        var pipeStart: [Double] = []
        var netRatios: [Double] = []
        var agentLines = 0
        var pipeLines = 0
        for _ in 0..<rounds {
            let a = try measure { port in (agentPath, ["locations", "--gpsd", "127.0.0.1:\(port)", "--json"]) }
            let b = try measure { port in ("/usr/bin/gpspipe", ["-w", "127.0.0.1:\(port)"]) }
            // What starting the process and connecting costs, without the feed: dynamic linking weighs far
            // more for a Swift binary than for a small C one, and a vehicle starts the agent once.
            let a0 = try startupCPU(
                agentPath, ["locations", "--gpsd", "127.0.0.1:PORT", "--count", "1", "--timeout", "0.2"])
            let b0 = try startupCPU("/usr/bin/gpspipe", ["-w", "-n", "1", "127.0.0.1:PORT"])
            agentCPU.append(a.cpu)
            pipeCPU.append(b.cpu)
            agentSystem.append(a.system)
            pipeSystem.append(b.system)
            ratios.append(a.cpu / b.cpu)
            agentStart.append(a0)
            pipeStart.append(b0)
            netRatios.append(max(a.cpu - a0, 0) / max(b.cpu - b0, 1e-6))
            agentLines = a.lines
            pipeLines = b.lines
        }
        print(
            jsonLine([
                "scenario": "gpsd-cpu", "log": URL(fileURLWithPath: log).lastPathComponent, "repeats": repeats,
                "rounds": rounds,
                "agent_cpu_s": rounded(median(agentCPU), 4), "gpspipe_cpu_s": rounded(median(pipeCPU), 4),
                "agent_system_cpu_s": rounded(median(agentSystem), 4),
                "gpspipe_system_cpu_s": rounded(median(pipeSystem), 4),
                "ratio": rounded(median(ratios), 2),
                "agent_startup_cpu_s": rounded(median(agentStart), 4),
                "gpspipe_startup_cpu_s": rounded(median(pipeStart), 4),
                "net_ratio": rounded(median(netRatios), 2),
                "agent_locations": agentLines, "gpspipe_lines": pipeLines,
            ]))
    }

    /// Runs one client against a fresh gpsd and feed; returns its CPU seconds and output lines.
    private func measure(_ client: (Int) -> (String, [String])) throws -> (cpu: Double, system: Double, lines: Int) {
        let feed = try NMEAFeed(log: URL(fileURLWithPath: log), repeats: repeats)
        defer { feed.stop() }
        let gpsd = try LocalGPSD(sources: [feed.url])
        try gpsd.start()
        defer { gpsd.stop() }
        let output = gpsd.directory.appendingPathComponent("client.out").path
        let (tool, arguments) = client(gpsd.port)
        let pid = try LocalProcess.spawn(tool, arguments, standardOutput: output)
        var lastSize = -1
        var stableSince = Date()
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            usleep(50_000)
            let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
            if size != lastSize {
                lastSize = size
                stableSince = Date()
            }
            if feed.linesSent == feed.lineCount, size > 0, Date().timeIntervalSince(stableSince) >= 0.5 { break }
        }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        var usage = rusage()
        guard wait4(pid, &status, 0, &usage) == pid else { throw ValidationError("lost the client \(tool)") }
        let cpu = cpuSeconds(usage)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        // gpspipe ends lines with CRLF, which Swift reads as one Character: count the bytes.
        let lines = text.utf8.filter { $0 == 0x0A }.count
        guard feed.linesSent == feed.lineCount, lines > 0 else {
            throw ValidationError("\(tool) did not read the whole log")
        }
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return (cpu, system, lines)
    }

    /// CPU seconds of a client that connects to a gpsd without receivers and leaves.
    private func startupCPU(_ tool: String, _ arguments: [String]) throws -> Double {
        let gpsd = try LocalGPSD(sources: [])
        try gpsd.start()
        defer { gpsd.stop() }
        let pid = try LocalProcess.spawn(
            tool, arguments.map { $0.replacingOccurrences(of: "PORT", with: "\(gpsd.port)") })
        var status: Int32 = 0
        var usage = rusage()
        guard wait4(pid, &status, 0, &usage) == pid else { throw ValidationError("lost the client \(tool)") }
        return cpuSeconds(usage)
    }

    private func cpuSeconds(_ usage: rusage) -> Double {
        Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    private func median(_ xs: [Double]) -> Double { Statistics.median(xs) }
}
