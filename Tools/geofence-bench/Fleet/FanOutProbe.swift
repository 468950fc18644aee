import AgentOutputs
import BenchFigures
import Foundation
import Logging
import Mosquitto

/// Subscribers that take the fleet's `track` as ten dashboards would, without a browser: how the broker
/// fans one fleet out to many readers. Each counts what it receives and how old each batch's newest fix is
/// on arrival (its lag), in the first and the second half of the run.
actor FanOutProbe {
    private var clients: [MQTTClient] = []
    private var readers: [Task<[Double], Never>] = []
    private let started = ContinuousClock.now

    init(subscribers: Int, port: Int, fleet: String) async throws {
        for k in 0..<subscribers {
            let client = try MQTTClient(
                configuration: MQTTConfiguration(port: port, clientID: "fan-out-\(k)-\(getpid())"),
                logger: Logger(label: "fan-out") { _ in SwiftLogNoOpLogHandler() })
            await client.start()
            try await waitConnected(client)
            let subscription = try await client.subscribe("fleet/\(fleet)/vehicles/+/track")
            clients.append(client)
            // Each message's arrival (seconds from the start) and lag (seconds), two numbers a message.
            readers.append(
                Task { [started] in
                    var samples: [Double] = []
                    for await message in subscription {
                        guard let batch = TrackEncoding.decode(message.payload), let last = batch.points.last else {
                            continue
                        }
                        samples += [
                            (ContinuousClock.now - started) / .seconds(1), Date().timeIntervalSince(last.time),
                        ]
                    }
                    return samples
                })
        }
    }

    /// Stops the subscribers and returns a JSON object of what each received.
    func finish(seconds: Double) async -> String {
        for client in clients { await client.shutdown() }
        var received: [Int] = []
        var firstHalf: [Int] = []
        var secondHalf: [Int] = []
        for reader in readers {
            let samples = await reader.value
            let pairs = stride(from: 0, to: samples.count, by: 2).map { (samples[$0], samples[$0 + 1]) }
            received.append(Int(Double(pairs.count) / seconds))
            let middle = (pairs.map(\.0).max() ?? 0) / 2
            firstHalf.append(Self.median(pairs.filter { $0.0 < middle }.map(\.1)))
            secondHalf.append(Self.median(pairs.filter { $0.0 >= middle }.map(\.1)))
        }
        return #"{"scenario": "fleet-fan-out", "subscribers": \#(clients.count), "received_per_s": \#(received), "#
            + #""lag_ms_p50_first_half": \#(firstHalf), "lag_ms_p50_second_half": \#(secondHalf)}"#
    }

    private static func median(_ values: [Double]) -> Int {
        values.isEmpty ? -1 : Int(Statistics.median(values) * 1000)
    }
}
