import AgentFormats
import AgentOutputs
import Foundation
import Geocoding
import GeofenceAgent
import GeofenceCore
import Logging
import Mosquitto
import ThreadExecution

/// `geofence-agent push`: publishes geofences as an operator would, retained, one Feature per topic,
/// after validating the whole file: one bad feature and nothing is published. Then the set's manifest,
/// amended with what was published or deleted, so that vehicles can confirm what they hold.
package enum PushJob {
    package static func run(
        configurationPath: String, conditionsPath: String, vehicle: String?, delete: Bool,
        only: [String]? = nil, repair: Bool = false, logger: Logger, emit: @Sendable (String) -> Void
    ) async throws(AgentError) {
        try await run(
            configurationPath: configurationPath, file: try ConditionFile.load(conditionsPath), vehicle: vehicle,
            delete: delete, only: only, repair: repair, logger: logger, emit: emit)
    }

    /// A circle of `radius` metres around the place `query` names (the most populous match, printed),
    /// published as the condition `identifier`.
    package static func run(
        configurationPath: String, place query: String, radius: Double, identifier: String, name: String?,
        geocoder: Geocoder, vehicle: String?, delete: Bool, logger: Logger,
        emit: @Sendable (String) -> Void
    ) async throws(AgentError) {
        let place: Placemark
        do {
            place = try await geocoder.geocodeAddressString(query, limit: 1)[0]
        } catch {
            throw GeocodeJobs.agentError(error, at: "--place \"\(query)\"")
        }
        emit("place: \(GeocodeJobs.text(place))")
        var properties = JSONLine()
        properties.add("radius", radius)
        properties.add("name", name ?? place.name)
        var geometry = JSONLine()
        geometry.add("type", "Point")
        geometry.addRaw("coordinates", "[\(place.location.longitude),\(place.location.latitude)]")
        var feature = JSONLine()
        feature.add("type", "Feature")
        feature.add("id", identifier)
        feature.addRaw("geometry", geometry.text)
        feature.addRaw("properties", properties.text)
        let file = try ConditionFile.parse(Array(feature.text.utf8), path: "--place \"\(query)\"")
        try await run(
            configurationPath: configurationPath, file: file, vehicle: vehicle, delete: delete, logger: logger,
            emit: emit)
    }

    /// `only`: the identifiers to publish of the file's (an operator publishing again what a vehicle reports
    /// missing); nil for all. `repair`: the broker is made to hold exactly the file (`PushPlan.Mode.repair`).
    package static func run(
        configurationPath: String, file: ConditionFile, vehicle: String?, delete: Bool, only: [String]? = nil,
        repair: Bool = false, logger: Logger, emit: @Sendable (String) -> Void
    ) async throws(AgentError) {
        let conditionsPath = file.path
        let configuration = try AgentConfiguration.load(configurationPath)
        if !file.errors.isEmpty {
            throw AgentError(
                "nothing was published: \(file.errors.count) of \(file.errors.count + file.definitions.count) features are invalid:\n"
                    + file.errorLines.joined(separator: "\n"))
        }
        guard !file.definitions.isEmpty else { throw AgentError("\(conditionsPath): no conditions to publish") }
        let definitions = try chosen(file, only: only)
        if let vehicle, let problem = IdentifierRules.problem(with: vehicle, what: "--vehicle") {
            throw AgentError(problem, exitCode: 64)
        }
        let topics = Topics(
            prefix: configuration.mqtt.topicPrefix, fleet: configuration.fleet, vehicle: configuration.vehicle)
        var mqtt = AgentRunner.mqttConfiguration(configuration, topics: topics)
        mqtt.clientID = "geofence-agent-push-\(UUID().uuidString.prefix(8))"
        mqtt.will = nil
        mqtt.sessionExpiry = 0
        let client: MQTTClient
        do { client = try MQTTClient(configuration: mqtt, logger: logger) } catch { throw AgentError("\(error)") }
        await client.start()
        defer { Task(executorPreference: PoolExecutor.preferred) { await client.shutdown() } }
        let deadline = ContinuousClock.now + .seconds(10)
        while !client.status.isConnected, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20), clock: .serialTimer)
        }
        guard client.status.isConnected else {
            let status = client.status
            let lastError = client.lastConnectionError
            await client.shutdown()
            let why: String
            if case .refused(let reason) = status {
                why = "the broker refused the connection: \(reason)"
            } else if case .unreachable(let reason) = status {
                why = reason
            } else {
                why = "no connection within 10 s" + (lastError.map { " (\($0))" } ?? "")
            }
            throw AgentError(
                "nothing was published: \(why) (broker \(configuration.mqtt.host):\(configuration.mqtt.port) from \(configurationPath))",
                exitCode: 1)
        }
        let manifestTopic = vehicle.map { topics.vehicleManifest(vehicle: $0) } ?? topics.fleetManifest
        let geofenceFilter = vehicle.map { topics.vehicleGeofence("+", vehicle: $0) } ?? topics.fleetGeofence("+")
        let current: (manifest: GeofenceManifest, retained: [String: String])
        do {
            current = try await RetainedManifest.read(
                client, topic: manifestTopic, geofences: repair ? geofenceFilter : nil)
        } catch {
            await client.shutdown()
            throw error
        }
        let mode: PushPlan.Mode = repair ? .repair(retained: current.retained) : delete ? .delete : .publish
        let plan = PushPlan(
            mode, geofences: definitions.map { ($0.identifier, Array((file.featureText($0.identifier) ?? "").utf8)) },
            manifest: current.manifest)
        for (identifier, payload) in plan.messages {
            let topic =
                vehicle.map { topics.vehicleGeofence(identifier, vehicle: $0) } ?? topics.fleetGeofence(identifier)
            do {
                _ = try await client.publish(topic, payload: payload, retain: true)
                emit("\(payload.isEmpty ? "deleted" : "published") \(topic)")
            } catch {
                await client.shutdown()
                throw AgentError("publishing \(topic) failed: \(error)", exitCode: 1)
            }
        }
        if repair && plan.messages.isEmpty { emit("the broker holds every geofence of \(file.path) as it is there") }
        do {
            _ = try await client.publish(manifestTopic, payload: plan.manifest.payload, retain: true)
            emit("published \(manifestTopic) (\(plan.manifest.geofences.count) geofences)")
        } catch {
            await client.shutdown()
            throw AgentError(
                "the geofences were published, the manifest on \(manifestTopic) was not: \(error); push again",
                exitCode: 1)
        }
        await client.shutdown()
    }

    /// The file's definitions that `only` names, in the file's order; an identifier not in the file is refused.
    static func chosen(_ file: ConditionFile, only: [String]?) throws(AgentError) -> [ConditionDefinition] {
        guard let only else { return file.definitions }
        let inFile = Set(file.definitions.map(\.identifier))
        let unknown = only.filter { !inFile.contains($0) }
        guard unknown.isEmpty else {
            throw AgentError(
                "nothing was published: --only names \(unknown.joined(separator: ", ")), not in \(file.path)",
                exitCode: 64)
        }
        let wanted = Set(only)
        return file.definitions.filter { wanted.contains($0.identifier) }
    }
}
