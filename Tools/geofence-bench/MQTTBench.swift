import ArgumentParser
import BenchFigures
import Foundation
import LocalServers
import Logging
import Mosquitto

/// `geofence-bench mqtt`: publish throughput with acknowledgements beside `mosquitto_pub -q 1 -l` on
/// the same broker, and the round trip from `publish` to a subscriber's `for await`.
struct MQTTBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt",
        abstract: "Measure the MQTT client against a local mosquitto it starts itself.",
        discussion: """
            Prints {"scenario": "mqtt-publish", "msgs_per_s": ..., "mosquitto_pub_msgs_per_s": ..., "ratio": ...} and \
            {"scenario": "mqtt-rtt", "p50_ms": ..., "p99_ms": ...}.

            Example:
              swift run -c release geofence-bench mqtt
            """
    )

    @Option(help: "QoS 1 messages for the throughput run.")
    var messages = 20_000

    @Option(help: "Payload bytes per message.")
    var size = 200

    @Option(help: "The client's in-flight window (publishes awaiting PUBACK at once).")
    var inflight = MQTTConfiguration(clientID: "x").maximumInflight

    @Option(help: "Rounds of (ours, mosquitto_pub), alternated; medians are printed.")
    var rounds = 5

    @Option(help: "Round trips timed.")
    var roundTrips = 2_000

    func run() async throws {
        UndoOnSignal.install()  // a stopped bench leaves none of its processes, namespaces or files
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let logger = Logger(label: "geofence-bench") { _ in SwiftLogNoOpLogHandler() }

        var publisherConfiguration = MQTTConfiguration(port: broker.port, clientID: "bench-pub")
        publisherConfiguration.maximumInflight = inflight
        let publisher = try MQTTClient(configuration: publisherConfiguration, logger: logger)
        await publisher.start()
        try await waitConnected(publisher)
        let payload = [UInt8](repeating: UInt8(ascii: "x"), count: size)
        let lines = broker.path("lines.txt")
        try String(repeating: String(repeating: "x", count: size) + "\n", count: messages).write(
            toFile: lines, atomically: true, encoding: .utf8)
        // The machine is noisy: alternate the two publishers on the same broker and take medians.
        var ours: [Double] = []
        var theirs: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<rounds {
            let a = try await throughput(publisher, payload: payload)
            let b = try mosquittoPubThroughput(port: broker.port, lines: lines)
            ours.append(a)
            theirs.append(b)
            ratios.append(a / b)
        }
        print(
            jsonLine([
                "scenario": "mqtt-publish", "messages": messages, "bytes": size, "rounds": rounds,
                "msgs_per_s": rounded(median(ours), 0), "mosquitto_pub_msgs_per_s": rounded(median(theirs), 0),
                "ratio": rounded(median(ratios), 2),
            ]))

        // Round trip: one message at a time, from publish to the subscriber's for-await.
        let subscriber = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "bench-sub"), logger: logger)
        await subscriber.start()
        try await waitConnected(subscriber)
        var iterator = try await subscriber.subscribe("bench/rtt").makeAsyncIterator()
        var samples: [UInt64] = []
        for k in 0..<(roundTrips + 200) {
            let t0 = nowNanoseconds()
            try await publisher.publish("bench/rtt", text: "\(k)")
            _ = await iterator.next()
            if k >= 200 { samples.append(nowNanoseconds() - t0) }
        }
        samples.sort()
        print(
            jsonLine([
                "scenario": "mqtt-rtt", "samples": samples.count, "p50_ms": rounded(quantile(samples, 0.5) / 1e6, 3),
                "p99_ms": rounded(quantile(samples, 0.99) / 1e6, 3),
            ]))
        await subscriber.shutdown()
        await publisher.shutdown()
    }

    /// Throughput as the outbox drains: as many concurrent publishers as the in-flight window, each
    /// awaiting its PUBACK before the next, until the last message is acknowledged.
    private func throughput(_ publisher: MQTTClient, payload: [UInt8]) async throws -> Double {
        let start = ContinuousClock.now
        let lanes = publisher.configuration.maximumInflight
        let messages = messages
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    for _ in stride(from: lane, to: messages, by: lanes) {
                        _ = try await publisher.publish("bench/throughput", payload: payload)
                    }
                }
            }
            try await group.waitForAll()
        }
        return Double(messages) / seconds(ContinuousClock.now - start)
    }

    /// The same messages through mosquitto_pub -q 1 -l, process start included: the C baseline.
    private func mosquittoPubThroughput(port: Int, lines: String) throws -> Double {
        let start = ContinuousClock.now
        let pid = try LocalProcess.spawn(
            "/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-l", "-t", "bench/c"],
            standardInput: lines)
        guard LocalProcess.reap(pid, within: 300) else { throw ValidationError("mosquitto_pub did not finish") }
        return Double(messages) / seconds(ContinuousClock.now - start)
    }

    private func median(_ xs: [Double]) -> Double { Statistics.median(xs) }
}
