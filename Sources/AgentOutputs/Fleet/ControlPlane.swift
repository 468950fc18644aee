import AgentFormats
import Foundation
import GeofenceCore
import Mosquitto

/// One message of the control plane: where it goes, what it says, and whether the broker keeps it.
package struct ControlMessage: Sendable, Equatable {
    package let topic: String
    package let payload: [UInt8]
    package let retain: Bool
}

/// The fleet's control topics (docs/topics.md): the retained `status` and the will that marks it `offline`,
/// the retained `state` summary and its `state/detail` pages on request, and `errors`. The runtime decides
/// when to say something; only this type knows where each message goes and how it is kept.
package struct ControlPlane: Sendable {
    package let topics: Topics

    package init(topics: Topics) {
        self.topics = topics
    }

    /// Given to the broker at connect: the retained status turns `offline` when the connection is lost.
    package var will: MQTTWill {
        var offline = JSONLine()
        offline.add("status", "offline")
        offline.add("fleet", topics.fleet)
        offline.add("vehicle", topics.vehicle)
        return MQTTWill(topic: topics.status, payload: Array(offline.text.utf8), qos: .atLeastOnce, retain: true)
    }

    /// The retained status, or nil when it cannot be encoded.
    package func status(_ status: AgentStatus) -> ControlMessage? {
        guard let data = try? JSONEncoder().encode(status) else { return nil }
        return ControlMessage(topic: topics.status, payload: Array(data), retain: true)
    }

    /// The retained summary of what the vehicle is inside.
    package func state(_ monitors: [MonitorSummary]) -> ControlMessage {
        ControlMessage(topic: topics.state, payload: Payloads.state(monitors, vehicle: topics.vehicle), retain: true)
    }

    /// One page of the full state, sent when asked (`reportState`), not kept.
    package func stateDetail(_ page: [UInt8]) -> ControlMessage {
        ControlMessage(topic: topics.stateDetail, payload: page, retain: false)
    }

    /// A refusal or a failure about `topic`, not kept.
    package func error(_ kind: Payloads.ErrorKind, about topic: String, identifier: String?, reason: String)
        -> ControlMessage
    {
        let payload = Payloads.error(
            kind: kind, topic: topic, identifier: identifier, reason: reason, vehicle: topics.vehicle)
        return ControlMessage(topic: topics.errors, payload: payload, retain: false)
    }
}
