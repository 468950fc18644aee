import ArgumentParser
import LocalServers

#if canImport(Glibc)
    import Glibc
#endif

/// `--broker`: what a benchmark's agent or fleet talks to. One mosquitto (MQTT 5), or the fleet's three-node
/// NATS cluster as docs/cluster.md sets it up (MQTT 3.1.1, one session for the cluster).
enum BenchBrokerKind: String, ExpressibleByArgument, CaseIterable, Sendable {
    case mosquitto
    case nats
}

/// The broker of one benchmark run, started (on a link's far side, or on loopback), and how the agent, a
/// fleet and a subscriber reach it.
final class BenchBroker {
    private let mosquitto: LocalMosquitto?
    private let cluster: LocalNATSCluster?
    let host: String
    /// The port a subscriber on the broker's side uses (node 1's on the cluster).
    var port: Int { ports[0] }
    /// Every node's MQTT port (one for mosquitto).
    let ports: [Int]
    /// mosquitto_sub's protocol flag for it.
    let subscriberProtocol: [String]
    /// The agent's `mqtt` object.
    let agentMQTT: [String: Any]

    init(_ kind: BenchBrokerKind, link: CellularLink? = nil, inflight: Int? = nil) throws {
        let address = link?.brokerAddress ?? "127.0.0.1"
        host = address
        switch kind {
        case .mosquitto:
            let broker = try LocalMosquitto()
            if let link { broker.namespace = (link.broker, link.brokerAddress) }
            if let inflight { broker.settings += "\nmax_inflight_messages \(inflight)" }
            try broker.start()
            (mosquitto, cluster, ports) = (broker, nil, [broker.port])
            subscriberProtocol = []
            agentMQTT = ["host": address, "port": broker.port]
        case .nats:
            guard LocalNATSCluster.isInstalled else {
                throw ValidationError("no pinned nats-server: run scripts/setup --test")
            }
            let nodes = try LocalNATSCluster(nodes: 3)
            if let link {
                nodes.namespaces = [0: (link.broker, address), 1: (link.broker, address), 2: (link.broker, address)]
            }
            try nodes.startAll()
            (mosquitto, cluster, ports) = (nil, nodes, nodes.mqttPorts)
            subscriberProtocol = ["-V", "mqttv311"]
            agentMQTT = [
                "hosts": nodes.mqttPorts.map { "\(address):\($0)" }, "protocol": "mqttv311", "sharedSession": true,
                "failoverAfter": 2,
            ]
        }
    }

    /// The broker's processes while they run, for their CPU and memory.
    var pids: [pid_t] {
        mosquitto.map { [$0.pid].compactMap { $0 } } ?? cluster.map { c in (0..<c.count).compactMap(c.pid) } ?? []
    }

    /// Kills node 1 (SIGKILL), as a crash would; one mosquitto is not killed.
    func killFirstNode() { cluster?.kill(0) }

    func stop() {
        mosquitto?.stop()
        cluster?.stopAll()
    }
}
