import AgentFormats
import AgentOutputs
import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import Logging
import Mosquitto
import ServiceLifecycle

/// `geofence-agent run`: gpsd (or a replayed drive) → filters → monitors → store → outbox → MQTT, with
/// geofences synced from MQTT and a status for operators.
public enum AgentRunner {
    public static func run(configurationPath: String, logger: Logger) async throws(AgentError) {
        let configuration = try AgentConfiguration.load(configurationPath)
        try await run(configuration, logger: logger)
    }

    public static func run(_ configuration: AgentConfiguration, logger: Logger) async throws(AgentError) {
        let agent = try await buildAgent(configuration, logger: logger)
        await agent.runToEnd()
    }
    package static func mqttConfiguration(_ c: AgentConfiguration, topics: Topics) -> MQTTConfiguration {
        var m = MQTTConfiguration(
            host: c.mqtt.host, port: c.mqtt.port, clientID: c.mqtt.clientID ?? "geofence-agent-\(c.fleet)-\(c.vehicle)")
        m.protocolVersion = c.mqtt.protocolVersion == "mqttv311" ? .v311 : .v5
        m.keepAlive = c.mqtt.keepAlive
        m.failover = c.mqtt.failover
        m.sharedSession = c.mqtt.sharedSession
        m.connectTimeout = c.mqtt.failoverAfter
        // A vehicle's link comes back when it comes back: try often (a SYN is 60 bytes).
        m.maximumRetryDelay = 5
        m.username = c.mqtt.username
        m.password = c.mqtt.passwordFile.map(MQTTPasswordSource.file) ?? .none
        m.tls = c.mqtt.tls.map { MQTTTLS(caFile: $0.caFile, certificateFile: $0.certificateFile, keyFile: $0.keyFile) }
        m.will = ControlPlane(topics: topics).will
        return m
    }
}
