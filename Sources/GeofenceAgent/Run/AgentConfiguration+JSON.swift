import AgentFormats
import AgentOutputs
import GeofenceCore
import Mosquitto

extension AgentConfiguration {
    /// Reads and validates a configuration from its bytes; `name` starts every error message. Relative
    /// paths stay as written (`load` resolves them against the file's directory).
    public static func parse(_ bytes: [UInt8], name: String) throws(AgentError) -> AgentConfiguration {
        let document: JSONValue
        do { document = try JSONParser.parse(bytes) } catch {
            throw AgentError("\(name): \(error.description)")
        }
        do {
            return try parse(document)
        } catch let error as ConfigError {
            throw AgentError("\(name): \(error.path): \(error.message)")
        } catch {
            throw AgentError("\(name): \(error)")
        }
    }

    /// The configuration as `config.json` text, every key written out (defaults included), in the form
    /// `parse` reads: what `geofence-agent config` prints, and `parse(json)` gives this configuration back.
    public var json: JSONValue {
        var mqttKeys: [String: JSONValue] = [
            "port": .number(Double(mqtt.port)), "topicPrefix": .string(mqtt.topicPrefix),
            "protocol": .string(mqtt.protocolVersion), "keepAlive": .number(Double(mqtt.keepAlive)),
            "failoverAfter": .number(mqtt.failoverAfter), "sharedSession": .bool(mqtt.sharedSession),
        ]
        if mqtt.failover.isEmpty {
            mqttKeys["host"] = .string(mqtt.host)
        } else {
            mqttKeys["hosts"] = .array(
                ([MQTTBroker(host: mqtt.host, port: mqtt.port)] + mqtt.failover).map { .string($0.description) })
        }
        mqttKeys["username"] = mqtt.username.map(JSONValue.string)
        mqttKeys["passwordFile"] = mqtt.passwordFile.map(JSONValue.string)
        mqttKeys["clientId"] = mqtt.clientID.map(JSONValue.string)
        if let tls = mqtt.tls {
            var t: [String: JSONValue] = ["caFile": .string(tls.caFile)]
            t["certificateFile"] = tls.certificateFile.map(JSONValue.string)
            t["keyFile"] = tls.keyFile.map(JSONValue.string)
            mqttKeys["tls"] = .object(t)
        }
        var gpsdKeys: [String: JSONValue] = [
            "host": .string(gpsd.host), "port": .number(Double(gpsd.port)),
            "noDataTimeout": .number(gpsd.noDataTimeout),
            "epochQuietPeriod": .number(gpsd.epochQuietPeriod), "epochEarlyClose": .bool(gpsd.epochEarlyClose),
        ]
        gpsdKeys["device"] = gpsd.device.map(JSONValue.string)
        var placesKeys: [String: JSONValue] = ["enabled": .bool(places.enabled)]
        placesKeys["gazetteer"] = places.gazetteer.map(JSONValue.string)
        var storeKeys: [String: JSONValue] = ["path": .string(storePath)]
        storeKeys["statusFile"] = statusFile.map(JSONValue.string)
        let m = monitor
        var top: [String: JSONValue] = [
            "fleet": .string(fleet), "vehicle": .string(vehicle),
            "mqtt": .object(mqttKeys), "gpsd": .object(gpsdKeys),
            "store": .object(storeKeys),
            "filters": .object([
                "confidence": .number(m.confidence), "minimumMargin": .number(m.minimumMargin),
                "unknownAccuracy": .number(m.unknownAccuracy), "restAveraging": .bool(m.restAveraging),
                "noiseCorrelationTime": .number(m.noiseCorrelationTime),
                "restMinimumMargin": .number(m.restMinimumMargin),
                "restDuration": .number(m.rest.duration), "movingSpeed": .number(m.rest.movingSpeed),
                "minimumDuration": .number(m.minimumDuration),
                "maximumHorizontalAccuracy": .number(m.maximumHorizontalAccuracy),
                "maximumSpeed": .number(m.maximumSpeed),
            ]),
            "trips": .object([
                "minimalTripDistance": .number(m.trips.minimalTripDistance),
                "minimalTripDuration": .number(m.trips.minimalTripDuration),
                "minimalParkingDuration": .number(m.trips.minimalParkingDuration),
                "minimalNoDataDuration": .number(m.trips.minimalNoDataDuration),
                "speedThreshold": .number(m.trips.rest.movingSpeed),
            ]),
            "motionCheck": .object([
                "enabled": .bool(m.motionCheck.enabled), "confidence": .number(m.motionCheck.confidence),
                "dopplerSigma": .number(m.motionCheck.dopplerSigma),
                "stationarySpeed": .number(m.motionCheck.stationarySpeed),
                "maximumGap": .number(m.motionCheck.maximumGap),
                "maximumExcursion": .number(m.motionCheck.maximumExcursion),
                "maximumAcceleration": .number(m.motionCheck.maximumAcceleration),
            ]),
            "overspeed": .object([
                "tolerance": .number(m.overspeed.tolerance), "minimumDuration": .number(m.overspeed.minimumDuration),
                "hysteresis": .number(m.overspeed.hysteresis),
                "unknownSpeedAccuracy": .number(m.overspeed.unknownSpeedAccuracy),
            ]),
            "liveUpdates": .object([
                "configuration": .string(liveUpdates.configuration.rawValue),
                "startedByDefault": .bool(liveUpdates.startedByDefault),
            ]),
            "places": .object(placesKeys),
            "outbox": .object([
                "maximumRows": .number(Double(outbox.maximumRows)),
                "maximumBytes": .number(Double(outbox.maximumBytes)),
                "hardMaximumRows": .number(Double(outbox.hardMaximumRows)),
                "hardMaximumBytes": .number(Double(outbox.hardMaximumBytes)),
                "groupCommitSeconds": .number(outbox.groupCommitSeconds),
            ]),
        ]
        if let replay {
            top["replay"] = .object([
                "gpx": .string(replay.gpx), "speedFactor": .number(replay.speedFactor),
                "horizontalAccuracy": .number(replay.horizontalAccuracy), "exitAtEnd": .bool(replay.exitAtEnd),
            ])
        }
        if let conditionsFile { top["conditions"] = .object(["file": .string(conditionsFile)]) }
        top.merge(outputs.json) { ours, _ in ours }
        return .object(top)
    }
}
