import AgentTestSupport
import Foundation
import LocalServers

/// A three-node cluster split over a `CellularLink`: nodes 1 and 2 in the link's vehicle namespace, node 3
/// in its broker namespace, so that cutting the link cuts node 3 off from the others. The operator, the
/// dashboard and the agent are mosquitto's clients and the agent's process inside the vehicle namespace.
final class PartitionedFleet {
    let link: CellularLink
    let cluster: LocalNATSCluster
    let directory: URL
    private var dashboardPID: pid_t?

    init() throws {
        link = try CellularLink(profile: .clean)
        do {
            cluster = try LocalNATSCluster(nodes: 3)
            cluster.namespaces = [
                0: (link.vehicle, link.vehicleAddress), 1: (link.vehicle, link.vehicleAddress),
                2: (link.broker, link.brokerAddress),
            ]
            try cluster.startAll()
        } catch {
            link.stop()
            throw error
        }
        directory = cluster.directory
    }

    func stop() {
        if let dashboardPID { LocalProcess.terminate(dashboardPID) }
        cluster.stopAll()
        link.stop()
    }

    func namespace(_ node: Int) -> String { cluster.namespaces[node]?.name ?? link.vehicle }

    /// mosquitto's client `tool` in node `node`'s namespace, talking MQTT 3.1.1 to it.
    func client(_ tool: String, on node: Int, _ arguments: [String]) -> (tool: String, arguments: [String]) {
        link.command(
            in: namespace(node),
            ["/usr/bin/\(tool)", "-h", cluster.address(node), "-p", "\(cluster.mqttPorts[node])", "-V", "mqttv311"]
                + arguments)
    }

    /// Publishes retained at QoS 1 through node `node`, as an operator does (an empty payload deletes). A
    /// publish the node drops (it closes the connection while JetStream makes the MQTT streams, or elects
    /// their leaders) is made again, up to 30 times.
    func publish(_ topic: String, _ payload: [UInt8], on node: Int = 1, retain: Bool = true) throws {
        let file = directory.appendingPathComponent("payload-\(UUID().uuidString.prefix(8))")
        try Data(payload).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let message = payload.isEmpty ? ["-n"] : ["-f", file.path]
        let pub = client("mosquitto_pub", on: node, ["-q", "1", "-t", topic] + (retain ? ["-r"] : []) + message)
        for attempt in 1...30 {
            do {
                try LocalProcess.run(pub.tool, pub.arguments, in: directory)
                return
            } catch  where attempt < 30 {
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }

    /// A dashboard on node `node` with a persistent session, writing each payload on `topic` to a file.
    func startDashboard(on node: Int = 1, topic: String = "fleet/test/vehicles/v1/events") throws {
        let sub = client(
            "mosquitto_sub", on: node, ["-q", "1", "-c", "-i", "dashboard-\(UUID().uuidString.prefix(6))", "-t", topic])
        dashboardPID = try LocalProcess.spawn(sub.tool, sub.arguments, standardOutput: dashboardFile.path)
    }

    var dashboardFile: URL { directory.appendingPathComponent("dashboard.txt") }

    /// What the dashboard heard, each message as a JSON object.
    var heard: [[String: Any]] {
        let text = (try? String(contentsOf: dashboardFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The transitions heard, first copies only.
    var transitions: [[String: Any]] {
        var seen: Set<String> = []
        return heard.filter { ($0["eventId"] as? String).map { seen.insert($0).inserted } ?? false }
    }

    /// The geofences node `node` holds retained, as a fresh subscriber there gets them: at most `expected`,
    /// or what came within 10 s.
    func retained(on node: Int, expected: Int) throws -> Set<String> {
        let output = directory.appendingPathComponent("retained-\(node)-\(UUID().uuidString.prefix(6)).txt")
        defer { try? FileManager.default.removeItem(at: output) }
        let sub = client(
            "mosquitto_sub", on: node,
            ["-q", "1", "-t", "fleet/test/geofences/+", "--retained-only", "-C", "\(expected)", "-W", "10", "-F", "%t"])
        let pid = try LocalProcess.spawn(sub.tool, sub.arguments, standardOutput: output.path)
        if !LocalProcess.reap(pid, within: 30) { LocalProcess.terminate(pid) }
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return Set(text.split(separator: "\n").map { String($0.split(separator: "/").last ?? "") })
    }

    /// The agent in the vehicle namespace.
    func start(_ agent: AgentFixture) throws -> pid_t {
        let run = link.command(
            in: link.vehicle, [AgentBinary.url.path, "run", "--config", agent.configURL.path, "--log-level", "info"])
        return try LocalProcess.spawn(
            run.tool, run.arguments, standardOutput: agent.logPath, standardError: agent.logPath)
    }
}
