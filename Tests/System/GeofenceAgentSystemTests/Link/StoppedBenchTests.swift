import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-bench budget` stopped by a signal in the middle of a run over its link: nothing it made may
/// outlive it (its agent, broker and subscribers, its two namespaces, its directories).
@Suite(.serialized, .offTheCooperativePool(.waiting)) struct StoppedBenchTests {
    @Test(arguments: [SIGTERM, SIGINT])
    func aStoppedBenchLeavesNothingBehind(signal: Int32) throws {
        let bench = AgentBinary.url.deletingLastPathComponent().appendingPathComponent("geofence-bench").path
        let err = try AgentBinary.temporaryFile("", suffix: ".log")
        // 10 minutes of replay at 20x: the run is surely under way when the signal comes.
        let pid = try LocalProcess.spawn(
            bench,
            [
                "budget", "--driving-live-only", "--fixes", "12000", "--speed-factor", "20", "--agent",
                AgentBinary.url.path,
            ],
            standardError: err)
        var reaped = false
        defer { if !reaped { LocalProcess.terminate(pid) } }

        let made = try #require(Self.waitForTheLongRun(of: pid), "no agent ran long: \(Self.read(err).suffix(2000))")
        #expect(made.children.contains { $0.command.contains("geofence-agent") })
        #expect(made.children.contains { $0.command.contains("mosquitto_sub") })
        #expect(made.children.contains { $0.command.hasPrefix("/usr/sbin/mosquitto") })
        #expect(made.namespaces.count == 2, "\(made.namespaces)")
        #expect(made.paths.count == 3, "the run's directory, the broker's and the status file's: \(made.paths)")

        kill(pid, signal)
        let status = LocalProcess.exitStatus(of: pid, within: 60)
        reaped = status != nil
        #expect(
            status == 128 + signal, "ended by the signal, as its default action would: \(String(describing: status))")
        for child in made.children {
            #expect(Self.command(of: child.pid) != child.command, "still running: \(child.command)")
        }
        #expect(Self.namespaces(of: pid).isEmpty, "namespaces left: \(Self.namespaces(of: pid))")
        for path in made.paths {
            #expect(!FileManager.default.fileExists(atPath: path), "left: \(path)")
        }
        Self.undo(made)
    }

    /// What a failed check left: the bench's children (still running the same command), its namespaces
    /// and its directories.
    static func undo(_ made: Made) {
        for child in made.children where command(of: child.pid) == child.command { kill(child.pid, SIGKILL) }
        for namespace in made.namespaces where FileManager.default.fileExists(atPath: "/var/run/netns/\(namespace)") {
            if let pid = try? LocalProcess.spawn(CellularLink.ipTool, ["netns", "del", namespace]) {
                _ = LocalProcess.reap(pid, within: 10)
            }
        }
        for path in made.paths { try? FileManager.default.removeItem(atPath: path) }
    }

    struct Made {
        var children: [(pid: pid_t, command: String)]
        var namespaces: [String]
        var paths: [String]
    }

    /// Waits until one agent of the bench's has run for 15 s (the short base run's lasts about one, a few on
    /// a loaded machine) and has written its status file, then lists what the bench has made.
    static func waitForTheLongRun(of bench: pid_t) -> Made? {
        let deadline = Date().addingTimeInterval(300)
        var agent: (pid: pid_t, since: Date)?
        func statusDirectories() -> [String] {
            let shm = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []
            return shm.filter { $0.hasPrefix("geofence-bench-\(bench)-") }.map { "/dev/shm/" + $0 }
        }
        while Date() < deadline {
            let current = children(of: bench).first { $0.command.contains("geofence-agent") }
            if let current, agent?.pid == current.pid {
                if let since = agent?.since, Date().timeIntervalSince(since) >= 15, !statusDirectories().isEmpty {
                    break
                }
            } else {
                agent = current.map { ($0.pid, Date()) }
            }
            usleep(250_000)
        }
        guard agent != nil, Date() < deadline else { return nil }
        let children = children(of: bench)
        // Each directory from a child's command line: the agent's config and the broker's.
        var paths = children.compactMap { child -> String? in
            let words = child.command.split(separator: " ").map(String.init)
            guard let flag = words.firstIndex(where: { $0 == "--config" || $0 == "-c" }), flag + 1 < words.count
            else { return nil }
            return URL(fileURLWithPath: words[flag + 1]).deletingLastPathComponent().path
        }
        paths += statusDirectories()
        return Made(children: children, namespaces: namespaces(of: bench), paths: paths)
    }

    /// The processes whose parent is `parent`, with their command lines.
    static func children(of parent: pid_t) -> [(pid: pid_t, command: String)] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> (pid_t, String)? in
            // The parent is the field after the command's closing parenthesis in /proc/PID/stat.
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"),
                stat[stat.index(after: close)...].split(separator: " ").dropFirst().first == "\(parent)",
                let command = command(of: pid)
            else { return nil }
            return (pid, command)
        }
    }

    static func command(of pid: pid_t) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return nil }
        return String(decoding: data.dropLast(), as: UTF8.self).replacingOccurrences(of: "\0", with: " ")
    }

    /// The bench's namespaces (`CellularLink` names them after its PID).
    static func namespaces(of bench: pid_t) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/var/run/netns")) ?? []
        return names.filter { $0.hasPrefix("gfa-") && $0.contains("-\(bench)-") }
    }

    static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
}
