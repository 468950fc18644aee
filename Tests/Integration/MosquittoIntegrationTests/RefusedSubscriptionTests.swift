import Foundation
import LocalServers
import Logging
import Synchronization
import TestSupport
import Testing

@testable import Mosquitto

/// A subscription the broker refuses (SUBACK 0x80, as a NATS cluster answers while it elects its leaders) is
/// asked for again with backoff until the broker grants it. Here a NATS server refuses it for want of a
/// permission, and grants it once its configuration, reloaded while the client waits, gives the permission.
/// (mosquitto grants a wildcard its ACL denies, and then delivers nothing: it cannot show a refusal.)
@Suite(.offTheCooperativePool(.waiting)) struct RefusedSubscriptionTests {
    static let filter = "fleet/f1/geofences/+"

    /// The vehicle may read `subjects`, and `$MQTT.sub.>`, where NATS delivers a QoS 1 subscription's messages.
    static func users(vehicleMayRead subjects: [String]) -> String {
        let list = (subjects + ["$MQTT.sub.>"]).map { "\"\($0)\"" }.joined(separator: ", ")
        return """
            authorization {
              users = [
                { user: vehicle, password: pw, permissions: { publish: ["fleet.>"], subscribe: [\(list)] } }
                { user: operator, password: pw }
              ]
            }
            """
    }

    func client(_ server: LocalNATSCluster, user: String, logger: Logger = testLogger()) throws -> MQTTClient {
        let password = server.directory.appendingPathComponent("password").path
        try "pw\n".write(toFile: password, atomically: true, encoding: .utf8)
        var configuration = MQTTConfiguration(host: "127.0.0.1", port: server.mqttPorts[0], clientID: "\(user)-1")
        configuration.protocolVersion = .v311
        configuration.username = user
        configuration.password = .file(password)
        configuration.minimumRetryDelay = 0.2
        configuration.maximumRetryDelay = 1
        return try MQTTClient(configuration: configuration, logger: logger)
    }

    @Test func aRefusedSubscriptionIsAskedAgainUntilTheBrokerGrantsIt() async throws {
        guard LocalNATSCluster.isInstalled else {
            throw LocalServerError("this test need the pinned nats-server: run scripts/setup --test")
        }
        let server = try LocalNATSCluster(nodes: 1)
        defer { server.stopAll() }
        server.settings = Self.users(vehicleMayRead: ["fleet.f1.vehicles.>"])
        try server.startAll()

        let logs = CapturingLogHandler()
        let vehicle = try client(server, user: "vehicle", logger: testLogger(logs))
        // Made before the connection, as the agent makes its subscriptions: the CONNACK sends it.
        let geofences = try await vehicle.subscribe(Self.filter)
        let received = Mutex<[MQTTMessage]>([])
        let reader = Task { for await message in geofences { received.withLock { $0.append(message) } } }
        defer { reader.cancel() }
        await vehicle.start()
        #expect(await eventually(30) { vehicle.status.isConnected })

        let refusedAgain = await eventually(30) { (vehicle.refusedSubscriptions[Self.filter]?.count ?? 0) >= 3 }
        #expect(refusedAgain, "asked again and refused again: \(vehicle.refusedSubscriptions)")
        #expect(vehicle.refusedSubscriptions[Self.filter]?.reason == MQTTReasonCode(0x80))
        #expect(logs.lines.contains { $0.contains("subscription to \(Self.filter) refused") })

        let operatorClient = try client(server, user: "operator")
        await operatorClient.start()
        #expect(await eventually(30) { operatorClient.status.isConnected })
        #expect(try await operatorClient.publish("fleet/f1/geofences/depot", text: "{}", retain: true).isSuccess)

        server.settings = Self.users(vehicleMayRead: ["fleet.f1.vehicles.>", "fleet.f1.geofences.*"])
        try server.reload(0)
        let arrived = await eventually(30) {
            received.withLock { $0.contains { $0.topic == "fleet/f1/geofences/depot" } }
        }
        #expect(arrived, "the retained geofence arrives once the subscription is granted: \(logs.lines.suffix(8))")
        #expect(vehicle.refusedSubscriptions.isEmpty)
        #expect(logs.lines.contains { $0.contains("subscription to \(Self.filter) granted after") })
        await operatorClient.shutdown()
        await vehicle.shutdown()
    }

    @Test func theBackoffDoublesUpToItsMaximum() {
        let waits = (1...6).map { MQTTClient.refusalBackoff($0, minimum: 1, maximum: 5) }
        #expect(waits == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5), .seconds(5)])
        #expect(MQTTClient.refusalBackoff(1_000, minimum: 0.5, maximum: 30) == .seconds(30))
    }
}
