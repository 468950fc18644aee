import AgentFormats
import AgentOutputs
import Foundation
import GeofenceCore
import Mosquitto
import Synchronization
import ThreadExecution

/// The manifest a push amends: the retained one on its topic, read before anything is published.
enum RetainedManifest {
    /// What the broker keeps on `topic` (an empty manifest when it keeps none), and with `geofences` (the
    /// set's filter, `.../geofences/+`) the digest of every geofence it keeps retained there, by identifier.
    /// One subscription to the topic's level (`.../manifests/+`) carries the retained manifest, then a marker
    /// published after subscribing: the broker sends them in that order, so the marker's arrival means nothing
    /// else is coming. The geofences' filter is subscribed first, so that its retained messages come before it.
    static func read(_ client: MQTTClient, topic: String, geofences: String?, within seconds: Double = 10)
        async throws(AgentError) -> (manifest: GeofenceManifest, retained: [String: String])
    {
        let level = (topic as NSString).deletingLastPathComponent
        let marker = "\(level)/push-\(UUID().uuidString.prefix(8))"
        let messages: MQTTSubscription
        let held = Mutex<[String: String]>([:])
        var collecting: Task<Void, Never>?
        var retainedGeofences: MQTTSubscription?
        do {
            if let geofences {
                let retained = try await client.subscribe(geofences)
                retainedGeofences = retained
                collecting = Task(executorPreference: PoolExecutor.preferred) {
                    for await message in retained where message.retained && !message.payload.isEmpty {
                        let identifier = (message.topic as NSString).lastPathComponent
                        held.withLock { $0[identifier] = GeofenceDigest.of(message.payload) }
                    }
                }
            }
            messages = try await client.subscribe("\(level)/+")
            _ = try await client.publish(marker, payload: [], retain: false)
        } catch {
            throw AgentError("nothing was published: reading the manifest on \(topic) failed: \(error)", exitCode: 1)
        }
        defer { messages.cancel() }
        let payload = await withTaskGroup(of: [UInt8]??.self) { group in
            group.addTask {
                var last: [UInt8]?
                for await message in messages {
                    if message.topic == topic { last = message.payload }
                    if message.topic == marker { return .some(last) }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds), clock: .serialTimer)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        // Ended, not cancelled: what the geofence subscription buffered before the marker is read first.
        retainedGeofences?.cancel()
        await collecting?.value
        guard let payload else {
            throw AgentError(
                "nothing was published: the broker did not return the manifest on \(topic) within \(Int(seconds)) s",
                exitCode: 1)
        }
        switch GeofenceManifest.decode(payload ?? []) {
        case .success(let manifest): return (manifest ?? GeofenceManifest(), held.withLock { $0 })
        case .failure(let error):
            throw AgentError(
                "nothing was published: the retained manifest on \(topic) is not one (\(error)); delete it "
                    + "(an empty retained message) and push the whole set again", exitCode: 1)
        }
    }
}
