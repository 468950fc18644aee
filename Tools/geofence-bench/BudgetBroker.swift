import ArgumentParser
import LocalServers

/// `--broker`: what the budget's agent talks to. One mosquitto (MQTT 5), or the fleet's three-node NATS
/// cluster as docs/cluster.md sets it up (MQTT 3.1.1, one session for the cluster), on the link's far side.
enum BudgetBroker: String, ExpressibleByArgument, CaseIterable, Sendable {
    case mosquitto
    case nats
}

/// The broker of one budget run, started, and how the agent and a subscriber reach it.
final class BudgetBrokerRun {
    private let mosquitto: LocalMosquitto?
    private let cluster: LocalNATSCluster?
    let host: String
    /// The port a subscriber on the broker's side uses (node 1's on the cluster).
    let port: Int
    /// mosquitto_sub's protocol flag for it.
    let subscriberProtocol: [String]
    /// The agent's `mqtt` object.
    let agentMQTT: [String: Any]

    init(_ kind: BudgetBroker, link: CellularLink?, inflight: Int?) throws {
        let address = link?.brokerAddress ?? "127.0.0.1"
        host = address
        switch kind {
        case .mosquitto:
            let broker = try LocalMosquitto()
            if let link { broker.namespace = (link.broker, link.brokerAddress) }
            if let inflight { broker.settings += "\nmax_inflight_messages \(inflight)" }
            try broker.start()
            (mosquitto, cluster, port) = (broker, nil, broker.port)
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
            (mosquitto, cluster, port) = (nil, nodes, nodes.mqttPorts[0])
            subscriberProtocol = ["-V", "mqttv311"]
            agentMQTT = [
                "hosts": nodes.mqttPorts.map { "\(address):\($0)" }, "protocol": "mqttv311", "sharedSession": true,
                "failoverAfter": 2,
            ]
        }
    }

    func stop() {
        mosquitto?.stop()
        cluster?.stopAll()
    }
}
