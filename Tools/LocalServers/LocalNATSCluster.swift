import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A NATS cluster of our own on loopback, for tests and benchmarks: every node with JetStream, a cluster
/// route to the others and an MQTT listener (3.1.1), each in its own directory with its own ports and store
/// (docs/cluster.md has the deployment's settings). Nodes are started and stopped by their PIDs: a node can
/// be killed mid-test and started again from its store. It never touches a server it did not start.
public final class LocalNATSCluster: @unchecked Sendable {
    /// The pinned server that `scripts/nats-server` (run by `scripts/setup --test`) puts in the checkout.
    public static let server = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/tools/nats-server").path
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: server) }

    public let directory: URL
    /// Each node's MQTT port, in node order.
    public let mqttPorts: [Int]
    /// Each node's NATS client port (monitoring and JetStream's API are reached through `monitorPorts`).
    public let clientPorts: [Int]
    /// Each node's HTTP monitoring port (`/jsz`, `/routez`).
    public let monitorPorts: [Int]
    private let routePorts: [Int]
    private var pids: [pid_t?]
    /// Extra lines for every node's `mqtt {}` block; may be set until the first `start`.
    public var mqttSettings = ""
    /// Extra top-level lines for every node (`authorization {}`, `accounts {}`); `reload` applies a change.
    public var settings = ""
    /// Extra lines for every node's `cluster {}` block (the routes' TLS); may be set until the first `start`.
    public var clusterSettings = ""
    /// Nodes run inside a network namespace of a `CellularLink`, listening on that side's address; set
    /// before the first `start`. A node in none listens on 127.0.0.1. Monitoring is not reachable from here
    /// for a node in a namespace.
    public var namespaces: [Int: (name: String, address: String)] = [:]

    public init(nodes: Int = 3) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nats-test-\(UUID().uuidString.prefix(8))")
        mqttPorts = try (0..<nodes).map { _ in try LocalProcess.freePort() }
        clientPorts = try (0..<nodes).map { _ in try LocalProcess.freePort() }
        monitorPorts = try (0..<nodes).map { _ in try LocalProcess.freePort() }
        routePorts = try (0..<nodes).map { _ in try LocalProcess.freePort() }
        pids = Array(repeating: nil, count: nodes)
        for k in 0..<nodes {
            try FileManager.default.createDirectory(at: nodeDirectory(k), withIntermediateDirectories: true)
        }
    }

    deinit {
        stopAll()
        try? FileManager.default.removeItem(at: directory)
    }

    public var count: Int { pids.count }

    /// The node's name in the cluster (`n1`, `n2`, ...), as its log and `/jsz` name it.
    public func name(_ k: Int) -> String { "n\(k + 1)" }

    public func isRunning(_ k: Int) -> Bool { pids[k] != nil }

    /// Node `k`'s process, while it runs (a benchmark reads its CPU and memory).
    public func pid(_ k: Int) -> pid_t? { pids[k] }

    func nodeDirectory(_ k: Int) -> URL { directory.appendingPathComponent(name(k)) }

    /// The node's log file.
    public func logPath(_ k: Int) -> String { nodeDirectory(k).appendingPathComponent("server.log").path }

    /// The node's configuration: its listeners, its JetStream store, and routes to every node. The MQTT
    /// streams are replicated on all three (`stream_replicas`): with fewer, a node's death loses retained
    /// geofences and refuses subscriptions (docs/cluster.md).
    /// The address node `k` listens on: its namespace's, or loopback.
    public func address(_ k: Int) -> String { namespaces[k]?.address ?? "127.0.0.1" }

    func configuration(_ k: Int) -> String {
        let routes = (0..<count).map { "nats-route://\(address($0)):\(routePorts[$0])" }.joined(separator: ", ")
        // One node alone is a server of its own, not a cluster of one.
        let cluster =
            count == 1
            ? ""
            : """
            cluster {
              name: fleet
              listen: \(address(k)):\(routePorts[k])
              routes: [\(routes)]
            \(clusterSettings)
            }
            """
        return """
            server_name: \(name(k))
            listen: \(address(k)):\(clientPorts[k])
            http: \(address(k)):\(monitorPorts[k])
            jetstream { store_dir: "\(nodeDirectory(k).appendingPathComponent("jetstream").path)" }
            \(cluster)
            mqtt {
              listen: \(address(k)):\(mqttPorts[k])
              stream_replicas: \(min(3, count))
            \(mqttSettings)
            }
            \(settings)
            """
    }

    /// Writes node `k`'s configuration again and has it reload it (SIGHUP): users and permissions change
    /// without a restart.
    public func reload(_ k: Int) throws {
        guard let pid = pids[k] else { return }
        try configuration(k).write(
            toFile: nodeDirectory(k).appendingPathComponent("nats.conf").path, atomically: true, encoding: .utf8)
        Glibc.kill(pid, SIGHUP)
    }

    /// Starts every node that is not running and waits until each listens for MQTT.
    public func startAll() throws {
        for k in 0..<count where pids[k] == nil { try start(k, waitForMQTT: false) }
        for k in 0..<count { try waitForMQTT(k) }
    }

    /// Starts node `k` from its store (a restart keeps what it held).
    public func start(_ k: Int, waitForMQTT wait: Bool = true) throws {
        guard pids[k] == nil else { return }
        let config = nodeDirectory(k).appendingPathComponent("nats.conf").path
        try configuration(k).write(toFile: config, atomically: true, encoding: .utf8)
        if let namespace = namespaces[k] {
            pids[k] = try LocalProcess.spawn(
                CellularLink.ipTool, ["netns", "exec", namespace.name, Self.server, "-c", config, "-l", logPath(k)])
        } else {
            pids[k] = try LocalProcess.spawn(Self.server, ["-c", config, "-l", logPath(k)])
        }
        if wait { try waitForMQTT(k) }
    }

    private func waitForMQTT(_ k: Int) throws {
        guard let pid = pids[k] else { return }
        let node = "nats-server \(name(k))"
        do {
            if namespaces[k] != nil {
                // Inside a namespace the port cannot be tried from here: the node's log says when it listens.
                try LocalProcess.waitUntilLogged(
                    ["Listening for MQTT clients on"], log: logPath(k), pid: pid, name: node, within: 30)
            } else {
                try LocalProcess.waitUntilListening(
                    port: mqttPorts[k], pid: pid, name: node, log: logPath(k), within: 30)
            }
        } catch {
            pids[k] = nil
            throw error
        }
    }

    /// SIGKILL: the node dies as a crash would, with no goodbye to the cluster.
    public func kill(_ k: Int) {
        guard let pid = pids[k] else { return }
        pids[k] = nil
        Glibc.kill(pid, SIGKILL)
        _ = LocalProcess.reap(pid, within: 10)
    }

    /// SIGTERM, then wait: a clean stop.
    public func stop(_ k: Int) {
        guard let pid = pids[k] else { return }
        pids[k] = nil
        LocalProcess.terminate(pid)
    }

    public func stopAll() {
        for k in 0..<count { stop(k) }
    }

    /// What node `k`'s monitoring endpoint says at `path` (`/jsz?streams=true`, `/routez`), as JSON: an HTTP/1.0
    /// GET on loopback (Foundation on Linux reads no `http:` URL without FoundationNetworking).
    public func monitor(_ k: Int, _ path: String) -> [String: Any]? {
        guard let fd = LoopbackConnection.open(port: monitorPorts[k], receiveTimeout: 5) else { return nil }
        defer { close(fd) }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        guard let end = response.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(response[end.upperBound...]))) as? [String: Any]
    }

    /// The JetStream meta leader's node index, as a running node sees it, if one is elected.
    public func metaLeader() -> Int? {
        for k in 0..<count where pids[k] != nil {
            guard let jsz = monitor(k, "/jsz"), let meta = jsz["meta_cluster"] as? [String: Any],
                let leader = meta["leader"] as? String
            else { continue }
            return (0..<count).first { name($0) == leader }
        }
        return nil
    }

    /// The node that leads stream `stream` (for MQTT's retained messages: `$MQTT_rmsgs`), if elected.
    public func streamLeader(_ stream: String) -> Int? {
        for k in 0..<count where pids[k] != nil {
            guard let jsz = monitor(k, "/jsz?streams=true"),
                let accounts = jsz["account_details"] as? [[String: Any]]
            else { continue }
            for account in accounts {
                for detail in account["stream_detail"] as? [[String: Any]] ?? []
                where detail["name"] as? String == stream {
                    if let leader = (detail["cluster"] as? [String: Any])?["leader"] as? String {
                        return (0..<count).first { name($0) == leader }
                    }
                }
            }
        }
        return nil
    }
}
