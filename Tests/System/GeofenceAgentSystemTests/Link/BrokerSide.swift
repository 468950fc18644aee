import AgentTestSupport
import Foundation
import LocalServers

/// The broker and a subscriber to every topic of the fleet, both in a link's broker namespace. The
/// subscriber writes each message with its arrival time (`mosquitto_sub -F '%U %t %p'`).
final class BrokerSide {
    let broker: LocalMosquitto
    let subscriberPID: pid_t
    let received: String

    init(link: CellularLink) throws {
        broker = try LocalMosquitto()
        broker.namespace = (link.broker, link.brokerAddress)
        try broker.start()
        received = broker.path("received.txt")
        let sub = link.command(
            in: link.broker,
            [
                "/usr/bin/mosquitto_sub", "-h", link.brokerAddress, "-p", "\(broker.port)", "-t", "fleet/#",
                "-F", "%U %t %p", "-q", "1",
            ])
        subscriberPID = try LocalProcess.spawn(sub.tool, sub.arguments, standardOutput: received)
    }

    func stop() {
        LocalProcess.terminate(subscriberPID)
        broker.stop()
    }

    /// One message heard: when (Unix seconds), on which topic's last level, its JSON.
    struct Heard {
        var at: Double
        var topic: String
        var json: [String: Any]
        var sequence: Int? { json["sequence"] as? Int }
    }

    /// Every message heard, in arrival order.
    var heard: [Heard] {
        let text = (try? String(contentsOfFile: received, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3, let at = Double(parts[0]),
                let json = try? JSONSerialization.jsonObject(with: Data(parts[2].utf8)) as? [String: Any]
            else { return nil }
            return Heard(at: at, topic: String(parts[1].split(separator: "/").last ?? ""), json: json)
        }
    }

    /// The events heard, as the agent published them (copies included).
    var events: [[String: Any]] { heard.filter { $0.topic == "events" }.map(\.json) }

    var log: String { (try? String(contentsOfFile: broker.path("broker.log"), encoding: .utf8)) ?? "" }
}
