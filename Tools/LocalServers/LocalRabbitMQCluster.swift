import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A RabbitMQ cluster of our own on loopback, with its MQTT plugin (MQTT 3.1.1 in Debian 12's 3.10), for
/// tests: every node in its own directory with its own ports, names and Erlang port mapper (epmd), so it
/// meets no other RabbitMQ on the machine. Nodes are stopped with `rabbitmqctl stop` (SIGKILL by the PID in
/// their pid file if that fails), and the epmd they started by its PID.
public final class LocalRabbitMQCluster: @unchecked Sendable {
    public static let server = "/usr/lib/rabbitmq/bin/rabbitmq-server"
    static let control = "/usr/lib/rabbitmq/bin/rabbitmqctl"
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: server) }

    public let directory: URL
    /// Each node's MQTT port, in node order.
    public let mqttPorts: [Int]
    private let names: [String]
    private let amqpPorts: [Int]
    private let distributionPorts: [Int]
    private let epmdPort: Int
    private var running: [Bool]

    public init(nodes: Int = 2) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rabbitmq-test-\(UUID().uuidString.prefix(8))")
        let tag = directory.lastPathComponent.suffix(8)
        names = (1...nodes).map { "rabbit\($0)-\(tag)@localhost" }
        mqttPorts = try (0..<nodes).map { _ in try LocalProcess.freePort() }
        amqpPorts = try (0..<nodes).map { _ in try LocalProcess.freePort() }
        distributionPorts = try (0..<nodes).map { _ in try LocalProcess.freePort() }
        epmdPort = try LocalProcess.freePort()
        running = Array(repeating: false, count: nodes)
        for k in 0..<nodes {
            let node = nodeDirectory(k)
            try FileManager.default.createDirectory(
                at: node.appendingPathComponent("home"), withIntermediateDirectories: true)
            // One cookie for all: nodes of a cluster must share it.
            let cookie = node.appendingPathComponent("home/.erlang.cookie").path
            try "GEOFENCEAGENTTESTCOOKIE\(tag)".write(toFile: cookie, atomically: true, encoding: .utf8)
            chmod(cookie, 0o400)
            try "[rabbitmq_mqtt].\n".write(
                to: node.appendingPathComponent("enabled_plugins"), atomically: true, encoding: .utf8)
            try """
            listeners.tcp.1 = 127.0.0.1:\(amqpPorts[k])
            mqtt.listeners.tcp.1 = 127.0.0.1:\(mqttPorts[k])
            mqtt.allow_anonymous = true
            """.write(to: node.appendingPathComponent("rabbitmq.conf"), atomically: true, encoding: .utf8)
        }
    }

    deinit {
        stopAll()
        try? FileManager.default.removeItem(at: directory)
    }

    private func nodeDirectory(_ k: Int) -> URL { directory.appendingPathComponent("node\(k + 1)") }

    private func environment(_ k: Int) -> [String: String] {
        let node = nodeDirectory(k).path
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = "\(node)/home"
        env["ERL_EPMD_PORT"] = "\(epmdPort)"
        env["RABBITMQ_NODENAME"] = names[k]
        env["RABBITMQ_DIST_PORT"] = "\(distributionPorts[k])"
        env["RABBITMQ_CONFIG_FILE"] = "\(node)/rabbitmq.conf"
        env["RABBITMQ_ENABLED_PLUGINS_FILE"] = "\(node)/enabled_plugins"
        env["RABBITMQ_MNESIA_BASE"] = "\(node)/mnesia"
        env["RABBITMQ_LOG_BASE"] = "\(node)/log"
        env["RABBITMQ_PID_FILE"] = "\(node)/pid"
        // Erlang's schedulers would otherwise busy-wait on both cores.
        env["RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS"] = "+S 1:1 +sbwt none +sbwtdcpu none +sbwtdio none"
        return env
    }

    /// Runs a RabbitMQ tool for node `k` (posix_spawn: its shell scripts wait for their children, which a
    /// blocked SIGCHLD inherited from the test runner would stop) and returns its status and output.
    @discardableResult
    private func run(_ tool: String, _ arguments: [String], node k: Int, within seconds: Double = 120) throws -> (
        status: Int32, output: String
    ) {
        let output = nodeDirectory(k).appendingPathComponent("tool-\(UUID().uuidString.prefix(6)).log").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let pid = try LocalProcess.spawn(
            tool, arguments, standardOutput: output, standardError: output, environment: environment(k))
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(seconds)
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard Date() < deadline else {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw LocalServerError(
                    "\(tool) \(arguments.joined(separator: " ")) did not end within \(Int(seconds)) s")
            }
            usleep(50_000)
        }
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exit, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    private func control(_ arguments: [String], node k: Int) throws {
        let result = try run(Self.control, ["-n", names[k]] + arguments, node: k)
        guard result.status == 0 else {
            throw LocalServerError(
                "rabbitmqctl \(arguments.joined(separator: " ")) on \(names[k]) failed: \(result.output.suffix(800))")
        }
    }

    /// Starts every node and joins the others to the first: 10–15 s a node.
    public func start(within seconds: Double = 120) throws {
        for k in running.indices {
            // The launcher returns once the node has detached.
            let result = try run(Self.server, ["-detached"], node: k)
            guard result.status == 0 else {
                throw LocalServerError("rabbitmq-server \(names[k]) did not start: \(result.output.suffix(800))")
            }
            running[k] = true
        }
        let deadline = Date().addingTimeInterval(seconds)
        for k in running.indices {
            while (try? control(["await_startup"], node: k)) == nil {
                guard Date() < deadline else {
                    throw LocalServerError(
                        "RabbitMQ \(names[k]) did not start within \(Int(seconds)) s: \(log(k).suffix(800))")
                }
                usleep(500_000)
            }
        }
        for k in running.indices.dropFirst() {
            try control(["stop_app"], node: k)
            try control(["reset"], node: k)
            try control(["join_cluster", names[0]], node: k)
            try control(["start_app"], node: k)
        }
        for (k, port) in mqttPorts.enumerated() {
            while !LocalProcess.canConnect(port: port) {
                guard Date() < deadline else {
                    throw LocalServerError("RabbitMQ \(names[k]) has no MQTT listener on \(port)")
                }
                usleep(200_000)
            }
        }
    }

    /// A started cluster. A node that does not start is tried once more with a fresh cluster: its ports are
    /// picked free but not held, and in a full parallel test run another test may take one (epmd's, a
    /// node's) before the node binds it, which leaves the node silent.
    public static func started(nodes: Int = 2, within seconds: Double = 120) throws -> LocalRabbitMQCluster {
        var failures: [String] = []
        for _ in 0..<2 {
            let cluster = try LocalRabbitMQCluster(nodes: nodes)
            do {
                try cluster.start(within: seconds)
                return cluster
            } catch {
                cluster.stopAll()
                failures.append("\(error)")
            }
        }
        throw LocalServerError("RabbitMQ did not start twice: \(failures.joined(separator: "; then: "))")
    }

    /// The node's log, for a failure's message.
    public func log(_ k: Int) -> String {
        let files =
            (try? FileManager.default.contentsOfDirectory(atPath: nodeDirectory(k).appendingPathComponent("log").path))
            ?? []
        let text = files.filter { $0.hasSuffix(".log") }.compactMap {
            try? String(contentsOfFile: nodeDirectory(k).appendingPathComponent("log/\($0)").path, encoding: .utf8)
        }.joined()
        return text.isEmpty ? "(no log; the node's log directory holds \(files.sorted()))" : text
    }

    /// Stops one node (the cluster goes on with the others).
    public func stop(node k: Int) {
        guard running[k] else { return }
        running[k] = false
        guard (try? control(["stop"], node: k)) == nil else { return }
        if let text = try? String(contentsOf: nodeDirectory(k).appendingPathComponent("pid"), encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            kill(pid, SIGKILL)
        }
        // A node that never got as far as its pid file: its Erlang VM, found by the node name we gave it.
        for pid in Self.processes(withEnvironment: "RABBITMQ_NODENAME=\(names[k])", named: "beam") {
            kill(pid, SIGKILL)
        }
    }

    /// Stops every node still running, then the epmd they started (found by the port it was given).
    public func stopAll() {
        for k in running.indices { stop(node: k) }
        for pid in Self.processes(withEnvironment: "ERL_EPMD_PORT=\(epmdPort)", named: "epmd") { kill(pid, SIGTERM) }
    }

    /// Our processes by name whose environment holds `entry`: the epmd our nodes started, and no other.
    static func processes(withEnvironment entry: String, named name: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            // Read to the end: /proc's files say they are empty.
            guard let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8), comm.hasPrefix(name),
                let environ = FileHandle(forReadingAtPath: "/proc/\(pid)/environ")?.readDataToEndOfFile()
            else { return false }
            return environ.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == entry }
        }
    }
}
