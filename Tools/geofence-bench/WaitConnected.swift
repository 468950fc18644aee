import ArgumentParser
import Mosquitto

/// Waits up to 10 s for a benchmark's client to connect to its broker; fails with the client's status.
func waitConnected(_ client: MQTTClient) async throws {
    for _ in 0..<1000 where !client.status.isConnected { try await Task.sleep(for: .milliseconds(10)) }
    guard client.status.isConnected else {
        throw ValidationError("no connection to the broker: \(client.status)")
    }
}
