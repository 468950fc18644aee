import Foundation
import LocalServers
import Logging
import TestSupport
import Testing
import ThreadExecution

@testable import Mosquitto

/// Every test runs its own mosquitto on a free loopback port.
@Suite(.offTheCooperativePool(.waiting), .serialized) struct MQTTClientTests {
    func client(
        _ broker: TestBroker, id: String, _ edit: (inout MQTTConfiguration) -> Void = { _ in },
        logger: Logger = testLogger()
    ) throws -> MQTTClient {
        var c = MQTTConfiguration(host: "127.0.0.1", port: broker.port, clientID: id)
        c.connectTimeout = 3
        edit(&c)
        return try MQTTClient(configuration: c, logger: logger)
    }

    func connected(_ c: MQTTClient) async -> Bool {
        await eventually { c.status.isConnected }
    }

    /// Starts each client and expects it to connect.
    func start(_ clients: MQTTClient..., sourceLocation: SourceLocation = #_sourceLocation) async {
        for c in clients { await c.start() }
        for c in clients { #expect(await connected(c), sourceLocation: sourceLocation) }
    }

    @Test func publishesAndReceivesInOrder() async throws {
        let broker = try TestBroker.started()
        defer { broker.stop() }
        let sub = try client(broker, id: "sub")
        let pub = try client(broker, id: "pub")
        await start(sub, pub)
        let messages = try await sub.subscribe("fleet/test/#")
        let before = ThreadExecutor.now()
        for k in 0..<50 {
            let code = try await pub.publish("fleet/test/\(k % 3)", text: "m\(k)")
            #expect(code.isSuccess)
        }
        var got: [String] = []
        var receipts: [UInt64] = []
        for await m in messages {
            got.append(m.text)
            receipts.append(m.receivedAtNanoseconds)
            if got.count == 50 { break }
        }
        #expect(got == (0..<50).map { "m\($0)" })
        // Each is stamped (`CLOCK_MONOTONIC`, the clock of `ThreadExecutor.now()`) when libmosquitto handed it
        // over: after the first publish, in arrival order, and before the task read it.
        let read = ThreadExecutor.now()
        #expect(receipts.first! > before && receipts.last! < read && receipts == receipts.sorted())
        await sub.shutdown()
        await pub.shutdown()
    }

    /// One task keeps many messages in flight with `issue` and they still arrive in call order.
    @Test func issuedMessagesStayInOrderWithManyInFlight() async throws {
        let broker = try TestBroker.started()
        defer { broker.stop() }
        let sub = try client(broker, id: "sub")
        let pub = try client(broker, id: "pub") { $0.maximumInflight = 50 }
        await start(sub, pub)
        let messages = try await sub.subscribe("outbox/#")
        var tickets: [PublishTicket] = []
        for k in 0..<2_000 { tickets.append(try await pub.issue("outbox/\(k % 7)", payload: Array("m\(k)".utf8))) }
        for t in tickets { #expect(try await t.acknowledgement().isSuccess) }
        var got: [String] = []
        for await m in messages {
            got.append(m.text)
            if got.count == 2_000 { break }
        }
        #expect(got == (0..<2_000).map { "m\($0)" })
        await sub.shutdown()
        await pub.shutdown()
    }

    @Test func retainedMessagesArriveAtSubscribe() async throws {
        let broker = try TestBroker.started()
        defer { broker.stop() }
        let pub = try client(broker, id: "pub")
        await start(pub)
        try await pub.publish("fleet/f1/geofences/depot", text: "{\"v\":1}", retain: true)
        let late = try client(broker, id: "late")
        await start(late)
        var iterator = try await late.subscribe("fleet/f1/geofences/+").makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.retained == true)
        #expect(first?.text == "{\"v\":1}")
        #expect(first?.topic == "fleet/f1/geofences/depot")
        await pub.shutdown()
        await late.shutdown()
    }

    @Test func tenThousandQoS1PublishesAreAllAcknowledged() async throws {
        let broker = try TestBroker.started()
        defer { broker.stop() }
        let pub = try client(broker, id: "bulk")
        await start(pub)
        let payload = [UInt8](repeating: 0x61, count: 200)
        let acknowledged = try await withThrowingTaskGroup(of: Bool.self) { group in
            for k in 0..<10_000 {
                group.addTask { try await pub.publish("bulk/\(k % 10)", payload: payload).isSuccess }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(acknowledged == 10_000)
        await pub.shutdown()
    }

    @Test func passwordFromAFileAndAnACLThatConfinesEachVehicle() async throws {
        let broker = try TestBroker(settings: "")
        defer { broker.stop() }
        try LocalProcess.run(
            "/usr/bin/mosquitto_passwd", ["-c", "-b", broker.path("passwd"), "vehicle-1", "s3cret-pw"],
            in: broker.directory)
        try "pattern readwrite fleet/f1/vehicles/%u/#\n".write(
            toFile: broker.path("acl"), atomically: true, encoding: .utf8)
        try "s3cret-pw\n".write(toFile: broker.path("password"), atomically: true, encoding: .utf8)
        let broker2 = try TestBroker(
            settings: "allow_anonymous false\npassword_file \(broker.path("passwd"))\nacl_file \(broker.path("acl"))",
            port: broker.port)
        defer { broker2.stop() }
        try broker2.start()
        let logs = CapturingLogHandler()
        let vehicle = try client(
            broker2, id: "vehicle-1",
            {
                $0.username = "vehicle-1"
                $0.password = .file(broker.path("password"))
            }, logger: testLogger(logs))
        await start(vehicle)
        #expect(try await vehicle.publish("fleet/f1/vehicles/vehicle-1/events", text: "ok").isSuccess)
        await #expect(throws: MQTTError.notAuthorized(topic: "fleet/f1/vehicles/vehicle-2/events")) {
            try await vehicle.publish("fleet/f1/vehicles/vehicle-2/events", text: "not mine")
        }
        // Still connected and usable after the refusal.
        #expect(try await vehicle.publish("fleet/f1/vehicles/vehicle-1/events", text: "ok again").isSuccess)
        await vehicle.shutdown()
        #expect(!logs.lines.contains { $0.contains("s3cret-pw") }, "the password never appears in logs")
    }

    @Test func wrongCredentialsAreReportedNotHung() async throws {
        let broker = try TestBroker(settings: "")
        defer { broker.stop() }
        try LocalProcess.run(
            "/usr/bin/mosquitto_passwd", ["-c", "-b", broker.path("passwd"), "vehicle-1", "right"], in: broker.directory
        )
        let secured = try TestBroker(
            settings: "allow_anonymous false\npassword_file \(broker.path("passwd"))", port: broker.port)
        defer { secured.stop() }
        try secured.start()
        setenv("GEOFENCE_TEST_MQTT_PASSWORD", "wrong", 1)
        let vehicle = try client(
            secured, id: "vehicle-1",
            {
                $0.username = "vehicle-1"
                $0.password = .environment("GEOFENCE_TEST_MQTT_PASSWORD")
            })
        await vehicle.start()
        let refused = await eventually(30) { if case .refused = vehicle.status { true } else { false } }
        #expect(refused, "status: \(vehicle.status)")
        if case .refused(let reason) = vehicle.status {
            #expect(reason.contains("135") || reason.contains("134") || reason.lowercased().contains("not authorized"))
        }
        await vehicle.shutdown()
    }

    @Test func aMissingPasswordSourceIsAClearConfigurationError() throws {
        var c = MQTTConfiguration(clientID: "x")
        c.username = "u"
        c.password = .file("/nonexistent/password")
        #expect(throws: MQTTError.configuration("password file '/nonexistent/password' cannot be read")) {
            try MQTTClient(configuration: c, logger: testLogger())
        }
        c.password = .environment("GEOFENCE_SURELY_UNSET_VARIABLE")
        #expect(
            throws: MQTTError.configuration(
                "environment variable GEOFENCE_SURELY_UNSET_VARIABLE (the broker password) is not set")
        ) {
            try MQTTClient(configuration: c, logger: testLogger())
        }
    }

    @Test func tlsWithVerificationAndAWrongCAIsReported() async throws {
        let broker = try TestBroker(settings: "")
        defer { broker.stop() }
        let certificates = try TestCertificates(in: broker.directory)
        let secured = try TestBroker(
            settings: """
                allow_anonymous true
                cafile \(certificates.caFile)
                certfile \(certificates.certificateFile)
                keyfile \(certificates.keyFile)
                tls_version tlsv1.2
                """, port: broker.port)
        try secured.start()
        let good = try client(secured, id: "tls-good", { $0.tls = MQTTTLS(caFile: certificates.caFile) })
        await start(good)
        #expect(try await good.publish("fleet/tls", text: "secure").isSuccess)
        await good.shutdown()

        let wrong = try client(secured, id: "tls-wrong", { $0.tls = MQTTTLS(caFile: certificates.otherCAFile) })
        await wrong.start()
        let reported = await eventually(30) {
            if case .unreachable(let r) = wrong.status { r.contains("TLS") } else { false }
        }
        #expect(reported, "status: \(wrong.status)")
        #expect(!wrong.status.isConnected)
        await wrong.shutdown()
    }

    @Test func aBrokerAbsentAtStartIsWaitedFor() async throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        let pub = try client(broker, id: "early")
        await pub.start()
        let pending = Task { try await pub.publish("fleet/early", text: "handed over before the broker existed") }
        try await Task.sleep(for: .seconds(1.5))
        #expect(!pub.status.isConnected)
        try broker.start()
        #expect(await eventually(30) { pub.status.isConnected })
        #expect(try await pending.value.isSuccess)
        await pub.shutdown()
    }

    @Test func aBrokerRestartMidPublishLosesNothing() async throws {
        let broker = try TestBroker.started()
        defer { broker.stop() }
        let sub = try client(broker, id: "restart-sub")
        let pub = try client(broker, id: "restart-pub")
        await start(sub, pub)
        let messages = try await sub.subscribe("restart/#")
        let total = 2000
        let acked = Counter()
        let publishing = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for k in 0..<total {
                    group.addTask {
                        let code = try await pub.publish("restart/\(k % 7)", text: "\(k)")
                        if code.isSuccess { acked.increment() }
                    }
                    if k % 100 == 99 { try await Task.sleep(for: .milliseconds(20)) }
                }
                try await group.waitForAll()
            }
        }
        #expect(await eventually { acked.value >= 300 })
        broker.stop()
        try await Task.sleep(for: .seconds(1))
        try broker.start()
        try await publishing.value
        #expect(acked.value == total)
        var seen = Set<Int>()
        let receiving = Task {
            for await m in messages {
                if let k = Int(m.text) { seen.insert(k) }
                if seen.count == total { break }
            }
            return seen.count
        }
        let received = try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask { await receiving.value }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return -1
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        receiving.cancel()
        #expect(received == total, "the persistent subscriber got every message")
        await sub.shutdown()
        await pub.shutdown()
    }

    @Test func subscriptionsComeBackWhenTheBrokerLostTheSession() async throws {
        let broker = try TestBroker.started()
        defer { broker.stop() }
        let sub = try client(broker, id: "forgotten-sub")
        await start(sub)
        var iterator = try await sub.subscribe("lost/#").makeAsyncIterator()
        broker.stop()
        try FileManager.default.removeItem(atPath: broker.path("mosquitto.db"))  // the broker forgets every session
        try broker.start()
        #expect(await eventually(30) { sub.status == .connected(sessionPresent: false) }, "status: \(sub.status)")
        let pub = try client(broker, id: "after-restart")
        await start(pub)
        // The resubscription and these publishes race: keep publishing until one arrives.
        let delivered = Task { await iterator.next()?.text }
        let text = await withTaskGroup(of: String?.self) { group in
            group.addTask { await delivered.value }
            group.addTask {
                for _ in 0..<50 {
                    try? await Task.sleep(for: .milliseconds(100))
                    _ = try? await pub.publish("lost/x", text: "still subscribed")
                }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        #expect(text == "still subscribed")
        await sub.shutdown()
        await pub.shutdown()
    }

    @Test func shutdownPublishesOfflineExplicitly() async throws {
        let broker = try TestBroker.started()
        defer { broker.stop() }
        let vehicle = try client(
            broker, id: "v-offline",
            {
                $0.will = MQTTWill(topic: "fleet/f1/vehicles/v/status", payload: Array("offline".utf8), retain: true)
            })
        await start(vehicle)
        try await vehicle.publish("fleet/f1/vehicles/v/status", text: "online", retain: true)
        await vehicle.shutdown()
        #expect(vehicle.status == .stopped)
        let dashboard = try client(broker, id: "dash")
        await start(dashboard)
        var iterator = try await dashboard.subscribe("fleet/f1/vehicles/+/status").makeAsyncIterator()
        #expect(await iterator.next()?.text == "offline")
        await #expect(throws: MQTTError.shutDown) { try await vehicle.publish("x", text: "after shutdown") }
        await dashboard.shutdown()
    }

    @Test func mqtt311Works() async throws {
        let broker = try TestBroker.started()
        defer { broker.stop() }
        let old = try client(broker, id: "v311", { $0.protocolVersion = .v311 })
        await start(old)
        let messages = try await old.subscribe("v311/#")
        #expect(try await old.publish("v311/a", text: "hello").isSuccess)
        var iterator = messages.makeAsyncIterator()
        #expect(await iterator.next()?.text == "hello")
        await old.shutdown()
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
