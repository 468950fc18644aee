import AgentFormats
import AgentOutputs
import Foundation
import GeofenceCore
import GeofenceStore
import Mosquitto

/// `config.json`: everything `geofence-agent run` needs. docs/configuration.md documents every key.
/// Unknown keys and wrong types are refused with the key's path, so a typo never silently falls back
/// to a default.
public struct AgentConfiguration: Sendable, Equatable {
    public struct MQTT: Sendable, Equatable {
        public var host = "127.0.0.1"
        public var port = 1883
        /// Further brokers (from `mqtt.hosts`), tried in turn when the present one is gone.
        public var failover: [MQTTBroker] = []
        /// Seconds without a connection before the next broker is tried.
        public var failoverAfter = 10.0
        public var topicPrefix = "fleet"
        public var username: String?
        public var passwordFile: String?
        public var tls: TLS?
        /// "mqttv5" or "mqttv311".
        public var protocolVersion = "mqttv5"
        public var keepAlive = 120
        public var clientID: String?
        /// The brokers of `mqtt.hosts` are the nodes of one cluster and share the session (one client id).
        public var sharedSession = false
    }

    public struct TLS: Sendable, Equatable {
        public var caFile: String
        public var certificateFile: String?
        public var keyFile: String?
    }

    public struct GPSD: Sendable, Equatable {
        public var host = "127.0.0.1"
        public var port = 2947
        public var device: String?
        public var noDataTimeout = 5.0
        /// An epoch's reports are coalesced until the next epoch starts or this much quiet (seconds).
        public var epochQuietPeriod = 0.05
        /// Close an epoch at the report count the receiver has kept for its last epochs.
        public var epochEarlyClose = true
    }

    /// A recorded drive instead of gpsd: for demos and tests on machines without a receiver.
    public struct Replay: Sendable, Equatable {
        public var gpx: String
        public var speedFactor = 1.0
        public var horizontalAccuracy = 5.0
        /// Stop the agent (gracefully) when the drive has been replayed, as the demo does.
        public var exitAtEnd = false
    }

    /// The place (nearest locality, area, country) on events, live updates and status, from the offline
    /// gazetteer.
    public struct Places: Sendable, Equatable {
        public var enabled = true
        /// The gazetteer file; nil: found as `geofence-agent geocode` finds it.
        public var gazetteer: String?
    }

    public struct LiveUpdates: Sendable, Equatable {
        public var configuration: LiveConfiguration = .default
        /// Whether live updates run before any `startLiveUpdates` command (the persisted flag wins).
        public var startedByDefault = false
    }

    public var fleet: String
    public var vehicle: String
    public var mqtt = MQTT()
    public var gpsd = GPSD()
    public var replay: Replay?
    public var storePath = "/var/lib/geofence-agent/agent.sqlite"
    /// Where the status file for `geofence-agent status` is kept, or nil: beside the store. A vehicle keeps it
    /// in RAM (`/run`): replaced every 30 s, it is most of what a parked agent writes to flash.
    public var statusFile: String?
    /// The store's files, with the status file where it is configured.
    public var storePaths: StorePaths { StorePaths(storePath, status: statusFile) }
    /// A GeoJSON file of local conditions loaded at start (source `local`), or nil.
    public var conditionsFile: String?
    /// How long the geofence sync must be quiet before the held geofences are compared with their manifests:
    /// a set still arriving is not a set that lost geofences. Not a configuration key; tests shorten it.
    package var manifestSettleSeconds = 2.0
    public var monitor = MonitorConfiguration()
    public var liveUpdates = LiveUpdates()
    public var outbox = OutboxLimits()
    public var places = Places()
    /// Every output's own object (`owntracks`, `homeAssistant`, `metrics`, ...), read by the output.
    public var outputs = OutputSettingsSet()

    public init(fleet: String, vehicle: String) {
        self.fleet = fleet
        self.vehicle = vehicle
    }

    /// Reads and validates a configuration file. Relative paths inside it are taken from the file's directory.
    public static func load(_ path: String) throws(AgentError) -> AgentConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AgentError(
                "\(path): cannot read the configuration file (\(FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"))"
            )
        }
        var c = try parse(Array(data), name: path)
        let base = (path as NSString).deletingLastPathComponent
        func resolve(_ p: String) -> String {
            p.hasPrefix("/") || base.isEmpty ? p : (base as NSString).appendingPathComponent(p)
        }
        c.storePath = resolve(c.storePath)
        c.statusFile = c.statusFile.map(resolve)
        c.conditionsFile = c.conditionsFile.map(resolve)
        if var replay = c.replay {
            replay.gpx = resolve(replay.gpx)
            c.replay = replay
        }
        c.mqtt.passwordFile = c.mqtt.passwordFile.map(resolve)
        c.places.gazetteer = c.places.gazetteer.map(resolve)
        c.outputs.resolvePaths(resolve)
        if var tls = c.mqtt.tls {
            tls.caFile = resolve(tls.caFile)
            tls.certificateFile = tls.certificateFile.map(resolve)
            tls.keyFile = tls.keyFile.map(resolve)
            c.mqtt.tls = tls
        }
        return c
    }

    typealias Object = ConfigObject
    typealias ConfigError = AgentFormats.ConfigError

    static func parse(_ document: JSONValue) throws -> AgentConfiguration {
        var top = try Object(document, path: "")
        func identifier(_ k: String) throws -> String {
            guard let v = try top.string(k) else { throw ConfigError(path: k, message: "is required") }
            if let problem = IdentifierRules.problem(with: v, what: k) { throw ConfigError(path: k, message: problem) }
            return v
        }
        var c = AgentConfiguration(fleet: try identifier("fleet"), vehicle: try identifier("vehicle"))
        if var m = try top.object("mqtt") {
            c.mqtt.host = try m.string("host") ?? c.mqtt.host
            c.mqtt.port = try m.integer("port", in: 1...65535) ?? c.mqtt.port
            if let hosts = m.raw("hosts") {
                guard m.values["host"] == nil else {
                    throw ConfigError(
                        path: "mqtt.hosts", message: "give the brokers in mqtt.hosts or one in mqtt.host, not both")
                }
                guard case .array(let list) = hosts, !list.isEmpty else {
                    throw ConfigError(path: "mqtt.hosts", message: "expected a list of \"HOST\" or \"HOST:PORT\"")
                }
                var brokers: [MQTTBroker] = []
                for (k, item) in list.enumerated() {
                    guard case .string(let text) = item else {
                        throw ConfigError(
                            path: "mqtt.hosts[\(k)]",
                            message: "expected \"HOST\" or \"HOST:PORT\", found \(item.typeName)")
                    }
                    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
                    guard !text.isEmpty, parts.count <= 2, !parts[0].isEmpty else {
                        throw ConfigError(
                            path: "mqtt.hosts[\(k)]",
                            message: "expected \"HOST\" or \"HOST:PORT\", found \"\(text.clipped)\"")
                    }
                    var port = c.mqtt.port
                    if parts.count == 2 {
                        guard let p = Int(parts[1]), (1...65535).contains(p) else {
                            throw ConfigError(
                                path: "mqtt.hosts[\(k)]", message: "port '\(String(parts[1]).clipped)' is not 1–65535")
                        }
                        port = p
                    }
                    brokers.append(MQTTBroker(host: String(parts[0]), port: port))
                }
                c.mqtt.host = brokers[0].host
                c.mqtt.port = brokers[0].port
                c.mqtt.failover = Array(brokers.dropFirst())
            }
            c.mqtt.failoverAfter = try m.number("failoverAfter", in: 1...3600) ?? c.mqtt.failoverAfter
            if let prefix = try m.string("topicPrefix") {
                for level in prefix.split(separator: "/", omittingEmptySubsequences: false) {
                    if let problem = IdentifierRules.problem(with: String(level), what: "topicPrefix level") {
                        throw ConfigError(path: "mqtt.topicPrefix", message: problem)
                    }
                }
                c.mqtt.topicPrefix = prefix
            }
            c.mqtt.username = try m.string("username")
            c.mqtt.passwordFile = try m.string("passwordFile")
            if var t = try m.object("tls") {
                guard let ca = try t.string("caFile") else {
                    throw ConfigError(path: "mqtt.tls.caFile", message: "is required when mqtt.tls is set")
                }
                c.mqtt.tls = TLS(
                    caFile: ca, certificateFile: try t.string("certificateFile"), keyFile: try t.string("keyFile"))
                try t.finish()
            }
            if let p = try m.string("protocol") {
                guard ["mqttv5", "mqttv311"].contains(p) else {
                    throw ConfigError(
                        path: "mqtt.protocol", message: "expected \"mqttv5\" or \"mqttv311\", found \"\(p.clipped)\"")
                }
                c.mqtt.protocolVersion = p
            }
            c.mqtt.keepAlive = try m.integer("keepAlive", in: 5...3600) ?? c.mqtt.keepAlive
            c.mqtt.clientID = try m.string("clientId")
            c.mqtt.sharedSession = try m.bool("sharedSession") ?? c.mqtt.sharedSession
            try m.finish()
        }
        if var g = try top.object("gpsd") {
            c.gpsd.host = try g.string("host") ?? c.gpsd.host
            c.gpsd.port = try g.integer("port", in: 1...65535) ?? c.gpsd.port
            c.gpsd.device = try g.string("device")
            c.gpsd.noDataTimeout = try g.number("noDataTimeout", in: 0.5...3600) ?? c.gpsd.noDataTimeout
            c.gpsd.epochQuietPeriod = try g.number("epochQuietPeriod", in: 0.0005...1) ?? c.gpsd.epochQuietPeriod
            c.gpsd.epochEarlyClose = try g.bool("epochEarlyClose") ?? c.gpsd.epochEarlyClose
            try g.finish()
        }
        if var r = try top.object("replay") {
            guard let gpx = try r.string("gpx") else {
                throw ConfigError(path: "replay.gpx", message: "is required when replay is set")
            }
            c.replay = Replay(
                gpx: gpx, speedFactor: try r.number("speedFactor", in: 0.001...1_000_000) ?? 1,
                horizontalAccuracy: try r.number("horizontalAccuracy", in: 0...10_000) ?? 5,
                exitAtEnd: try r.bool("exitAtEnd") ?? false)
            try r.finish()
        }
        if var s = try top.object("store") {
            c.storePath = try s.string("path") ?? c.storePath
            c.statusFile = try s.string("statusFile")
            if let file = c.statusFile, file.isEmpty || file.hasSuffix("/") {
                throw ConfigError(
                    path: "store.statusFile", message: "must name a file, such as /run/geofence-agent/status.json")
            }
            try s.finish()
        }
        if var s = try top.object("conditions") {
            c.conditionsFile = try s.string("file")
            try s.finish()
        }
        if var f = try top.object("filters") {
            if f.values["accuracyFactor"] != nil {
                throw ConfigError(
                    path: "filters.accuracyFactor",
                    message: "was replaced by filters.confidence (a probability such as 0.999; docs/monitoring.md)")
            }
            c.monitor.confidence = try f.number("confidence", in: 0.5...0.999_999_999) ?? c.monitor.confidence
            guard c.monitor.confidence > 0.5 else {
                throw ConfigError(path: "filters.confidence", message: "must be above 0.5")
            }
            c.monitor.minimumMargin = try f.number("minimumMargin", in: 0...10_000) ?? c.monitor.minimumMargin
            c.monitor.unknownAccuracy = try f.number("unknownAccuracy", in: 0.1...10_000) ?? c.monitor.unknownAccuracy
            c.monitor.restAveraging = try f.bool("restAveraging") ?? c.monitor.restAveraging
            c.monitor.noiseCorrelationTime =
                try f.number("noiseCorrelationTime", in: 0.1...86_400) ?? c.monitor.noiseCorrelationTime
            c.monitor.restMinimumMargin =
                try f.number("restMinimumMargin", in: 0...10_000) ?? c.monitor.restMinimumMargin
            c.monitor.rest.duration = try f.number("restDuration", in: 1...3600) ?? c.monitor.rest.duration
            c.monitor.rest.movingSpeed = try f.number("movingSpeed", in: 0.05...100) ?? c.monitor.rest.movingSpeed
            c.monitor.minimumDuration = try f.number("minimumDuration", in: 0...86_400) ?? c.monitor.minimumDuration
            c.monitor.maximumHorizontalAccuracy =
                try f.number("maximumHorizontalAccuracy", in: 1...1_000_000) ?? c.monitor.maximumHorizontalAccuracy
            c.monitor.maximumSpeed = try f.number("maximumSpeed", in: 1...100_000) ?? c.monitor.maximumSpeed
            try f.finish()
        }
        if var t = try top.object("trips") {
            var trips = c.monitor.trips
            trips.minimalTripDistance =
                try t.number("minimalTripDistance", in: 0...1_000_000) ?? trips.minimalTripDistance
            trips.minimalTripDuration =
                try t.number("minimalTripDuration", in: 0...86_400) ?? trips.minimalTripDuration
            trips.minimalParkingDuration =
                try t.number("minimalParkingDuration", in: 1...86_400) ?? trips.minimalParkingDuration
            trips.minimalNoDataDuration =
                try t.number("minimalNoDataDuration", in: 1...604_800) ?? trips.minimalNoDataDuration
            trips.rest.movingSpeed = try t.number("speedThreshold", in: 0.05...100) ?? trips.rest.movingSpeed
            c.monitor.trips = trips
            try t.finish()
        }
        if var m = try top.object("motionCheck") {
            var check = c.monitor.motionCheck
            check.enabled = try m.bool("enabled") ?? check.enabled
            check.confidence = try m.number("confidence", in: 0.5...0.999_999_999) ?? check.confidence
            guard check.confidence > 0.5 else {
                throw ConfigError(path: "motionCheck.confidence", message: "must be above 0.5")
            }
            check.dopplerSigma = try m.number("dopplerSigma", in: 0.001...50) ?? check.dopplerSigma
            check.stationarySpeed = try m.number("stationarySpeed", in: 0...100) ?? check.stationarySpeed
            check.maximumGap = try m.number("maximumGap", in: 0.1...3600) ?? check.maximumGap
            check.maximumExcursion = try m.number("maximumExcursion", in: 1...86_400) ?? check.maximumExcursion
            check.maximumAcceleration =
                try m.number("maximumAcceleration", in: 0.1...1000) ?? check.maximumAcceleration
            c.monitor.motionCheck = check
            try m.finish()
        }
        if var o = try top.object("overspeed") {
            c.monitor.overspeed.tolerance = try o.number("tolerance", in: 0...200) ?? c.monitor.overspeed.tolerance
            c.monitor.overspeed.minimumDuration =
                try o.number("minimumDuration", in: 0...3600) ?? c.monitor.overspeed.minimumDuration
            c.monitor.overspeed.hysteresis = try o.number("hysteresis", in: 0...200) ?? c.monitor.overspeed.hysteresis
            c.monitor.overspeed.unknownSpeedAccuracy =
                try o.number("unknownSpeedAccuracy", in: 0...50) ?? c.monitor.overspeed.unknownSpeedAccuracy
            try o.finish()
        }
        if var l = try top.object("liveUpdates") {
            if let name = try l.string("configuration") {
                guard let preset = LiveConfiguration(rawValue: name) else {
                    throw ConfigError(
                        path: "liveUpdates.configuration",
                        message:
                            "expected one of \(LiveConfiguration.allCases.map(\.rawValue).joined(separator: ", ")), found \"\(name.clipped)\""
                    )
                }
                c.liveUpdates.configuration = preset
            }
            c.liveUpdates.startedByDefault = try l.bool("startedByDefault") ?? c.liveUpdates.startedByDefault
            try l.finish()
        }
        if var p = try top.object("places") {
            c.places.enabled = try p.bool("enabled") ?? c.places.enabled
            c.places.gazetteer = try p.string("gazetteer")
            try p.finish()
        }
        c.outputs = try OutputSettingsSet.parse(&top)
        if var o = try top.object("outbox") {
            c.outbox.maximumRows = try o.integer("maximumRows", in: 1...100_000_000) ?? c.outbox.maximumRows
            c.outbox.maximumBytes = try o.integer("maximumBytes", in: 1024...(1 << 40)) ?? c.outbox.maximumBytes
            c.outbox.hardMaximumRows = try o.integer("hardMaximumRows", in: 1...100_000_000) ?? c.outbox.hardMaximumRows
            c.outbox.hardMaximumBytes =
                try o.integer("hardMaximumBytes", in: 1024...(1 << 40)) ?? c.outbox.hardMaximumBytes
            c.outbox.groupCommitSeconds =
                try o.number("groupCommitSeconds", in: 0...3600) ?? c.outbox.groupCommitSeconds
            guard c.outbox.hardMaximumRows >= c.outbox.maximumRows else {
                throw ConfigError(path: "outbox.hardMaximumRows", message: "must be at least outbox.maximumRows")
            }
            guard c.outbox.hardMaximumBytes >= c.outbox.maximumBytes else {
                throw ConfigError(path: "outbox.hardMaximumBytes", message: "must be at least outbox.maximumBytes")
            }
            try o.finish()
        }
        try top.finish()
        return c
    }
}
