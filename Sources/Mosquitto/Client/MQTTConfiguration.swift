import Foundation

/// Where the broker password comes from. It is read when the client starts and never logged.
public enum MQTTPasswordSource: Sendable, Equatable {
    case none
    /// The first line of a file (a trailing newline is dropped).
    case file(String)
    /// An environment variable.
    case environment(String)

    /// The password, or an error that names the file or variable (never the password).
    public func resolve() throws(MQTTError) -> String? {
        switch self {
        case .none:
            return nil
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw MQTTError.configuration("password file '\(path)' cannot be read")
            }
            let text = String(decoding: data, as: UTF8.self)
            return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        case .environment(let name):
            guard let value = ProcessInfo.processInfo.environment[name] else {
                throw MQTTError.configuration("environment variable \(name) (the broker password) is not set")
            }
            return value
        }
    }
}

/// TLS settings. The broker's certificate is always verified, against `caFile`.
public struct MQTTTLS: Sendable, Equatable {
    public var caFile: String
    public var certificateFile: String?
    public var keyFile: String?

    public init(caFile: String, certificateFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}

/// A message the broker publishes for us if we vanish (the will), and that a graceful shutdown
/// publishes explicitly, since a normal disconnect discards the will.
public struct MQTTWill: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = true) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// One broker's address.
public struct MQTTBroker: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var description: String { "\(host):\(port)" }
}

/// How to reach the broker and how to behave towards it.
public struct MQTTConfiguration: Sendable, Equatable {
    public enum ProtocolVersion: String, Sendable, Equatable {
        case v5 = "5"
        case v311 = "3.1.1"
    }

    public var host: String
    public var port: Int
    /// Further brokers, tried in turn when the present one is gone for `connectTimeout` (a cluster's
    /// other nodes, or a bridged broker). Messages awaiting their acknowledgement are sent again to the
    /// next, in their order, and subscriptions are restored where the session is new.
    public var failover: [MQTTBroker] = []
    /// Unique per vehicle: the broker keeps the persistent session under it.
    public var clientID: String
    public var protocolVersion: ProtocolVersion = .v5
    public var keepAlive: Int = 30
    /// MQTT 5 session expiry in seconds: the broker keeps subscriptions and queued QoS 1 messages this long
    /// after a disconnect. Zero for a clean session each time.
    public var sessionExpiry: UInt32 = 7 * 24 * 3600
    public var username: String?
    public var password: MQTTPasswordSource = .none
    public var tls: MQTTTLS?
    public var will: MQTTWill?
    /// Most QoS 1 publishes awaiting PUBACK at once; `publish` waits for a place beyond that. This bounds
    /// memory; on the wire libmosquitto also honours the broker's Receive Maximum (mosquitto: 20), queueing
    /// the rest on its own thread, which is why a window above it is faster. At most 65,000: message ids
    /// are 16-bit.
    public var maximumInflight: Int = 100
    /// A connection attempt with no CONNACK after this many seconds counts as failed. libmosquitto
    /// reports a TLS verification failure only in its log, and then stops trying.
    public var connectTimeout: Double = 10
    /// Backoff between connection attempts, seconds: libmosquitto's retries of an unreachable broker, and
    /// the supervisor's rounds of failover.
    public var minimumRetryDelay: Double = 1
    public var maximumRetryDelay: Double = 30
    /// The backoff's cap, seconds, once the broker refused the login or TLS verification failed: only a change
    /// of settings ends that, and each attempt costs a whole handshake (over TLS about 3.8 kB on a vehicle's
    /// paid link: every 5 s that would be 2.8 MB an hour; every 300 s, 46 kB).
    public var maximumRefusedRetryDelay: Double = 300
    /// Seconds that sent data may stay unacknowledged before the connection counts as stalled and is
    /// dropped, to be made again (Linux's `TCP_USER_TIMEOUT`; 0: the kernel's default, 15 minutes and
    /// more). After an outage TCP's retransmission backoff can leave a socket silent for 20-30 s, and the
    /// keepalive's PINGREQ waits behind the stuck data. A connection attempt (SYN) unanswered this long is
    /// made again too: its backoff is as slow.
    public var stallTimeout: Double = 10

    public init(host: String = "127.0.0.1", port: Int = 1883, clientID: String) {
        self.host = host
        self.port = port
        self.clientID = clientID
    }

    /// Every broker, in the order they are tried: `host`:`port`, then `failover`.
    public var brokers: [MQTTBroker] { [MQTTBroker(host: host, port: port)] + failover }

    /// Whether the brokers share one session (the nodes of a NATS cluster keep it in JetStream): then every
    /// broker gets `clientID`, and what was queued for the vehicle on one node reaches it on another.
    /// Otherwise each broker keeps its own session under its own id (bridged brokers; a RabbitMQ node that is
    /// down still holds its session and refuses the same id on another).
    public var sharedSession = false

    /// The client id used with one broker: `clientID` with the first (with every one when `sharedSession`),
    /// `clientID-N` with the Nth after it.
    public func clientID(forBroker index: Int) -> String {
        index == 0 || sharedSession ? clientID : "\(clientID)-\(index + 1)"
    }
}

/// What went wrong, for callers of the client.
public enum MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Bad settings: a password file that cannot be read, a client id libmosquitto refuses.
    case configuration(String)
    /// A library call failed.
    case library(MosquittoError)
    /// The broker refused the publish or subscription because of its ACL (reason 135). Not retried.
    case notAuthorized(topic: String)
    /// The broker answered with another failure reason code (≥ 0x80).
    case refused(topic: String, reason: MQTTReasonCode)
    /// A QoS 0 publish while not connected: it would be dropped silently, so it is refused.
    case notConnected
    /// The client is shutting down; the operation did not complete.
    case shutDown
    /// The calling task was cancelled before the operation completed. A message already handed to
    /// libmosquitto may still reach the broker.
    case cancelled

    public var description: String {
        switch self {
        case .configuration(let m): "MQTT configuration: \(m)"
        case .library(let e): "MQTT: \(e)"
        case .notAuthorized(let topic):
            "MQTT: not authorized for '\(topic)' (reason 135): check the broker's ACL for this client"
        case .refused(let topic, let reason): "MQTT: '\(topic)' refused by the broker, reason \(reason)"
        case .notConnected: "MQTT: not connected (a QoS 0 message would be lost)"
        case .shutDown: "MQTT: the client is shutting down"
        case .cancelled: "MQTT: cancelled before the broker acknowledged it"
        }
    }
}

/// The connection as the supervisor sees it, for the agent's status.
public enum MQTTConnectionStatus: Sendable, Equatable, CustomStringConvertible {
    case idle
    case connecting
    case connected(sessionPresent: Bool)
    /// The connection dropped; libmosquitto and the supervisor are reconnecting.
    case disconnected(reason: String)
    /// The broker refused the login (CONNACK reason), e.g. bad credentials. Retried with backoff.
    case refused(reason: String)
    /// No CONNACK in time: broker down, network, or a TLS verification failure (named when known).
    case unreachable(reason: String)
    case stopped

    public var isConnected: Bool { if case .connected = self { true } else { false } }

    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting: "connecting"
        case .connected(let present): "connected" + (present ? " (session resumed)" : "")
        case .disconnected(let r): "disconnected: \(r)"
        case .refused(let r): "refused: \(r)"
        case .unreachable(let r): "unreachable: \(r)"
        case .stopped: "stopped"
        }
    }
}
