import Foundation
import GeofenceStore
import Logging
import Mosquitto
import ServiceLifecycle
import Synchronization

/// Drains the outbox in sequence order through the MQTT client's bounded in-flight window. A row leaves
/// the outbox only when the broker acknowledged it with a reason below 0x80; anything not acknowledged
/// when the agent stops is sent again at the next start (consumers deduplicate by `eventId`).
public final class OutboxPublisher: Service, Sendable {
    private let store: AgentStore
    private let client: MQTTClient
    private let logger: Logger
    private let wakeStream: AsyncStream<Void>
    private let wakeContinuation: AsyncStream<Void>.Continuation
    private let refused = Atomic<Int>(0)

    public init(store: AgentStore, client: MQTTClient, logger: Logger) {
        self.store = store
        self.client = client
        self.logger = logger
        (wakeStream, wakeContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// New rows are in the outbox.
    public func wake() { wakeContinuation.yield() }

    /// Entries the broker refused (ACL, quota); they stay in the outbox and are logged.
    public var refusedCount: Int { refused.load(ordering: .relaxed) }

    public func run() async throws {
        await withTaskCancellationOrGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                var issuedUpTo: Int64 = 0
                var wakes = wakeStream.makeAsyncIterator()
                while !Task.isCancelled {
                    let batch: [OutboxEntry]
                    do {
                        batch = try await store.pending(after: issuedUpTo, limit: 256)
                    } catch {
                        logger.error("outbox read failed", metadata: ["error": "\(error)"])
                        try? await Task.sleep(for: .seconds(1))
                        continue
                    }
                    if batch.isEmpty {
                        // Woken by new rows; the stream ends when the agent stops.
                        guard await wakes.next() != nil else { return }
                        continue
                    }
                    for entry in batch {
                        let ticket: PublishTicket
                        do {
                            ticket = try await client.issue(entry.topic, payload: entry.payload, retain: entry.retain)
                        } catch {
                            // Shutting down: what was not acknowledged stays in the outbox for next time.
                            logger.debug("outbox publisher stops", metadata: ["reason": "\(error)"])
                            return
                        }
                        issuedUpTo = entry.sequence
                        group.addTask { [store, logger] in
                            do {
                                _ = try await ticket.acknowledgement()
                                try await store.acknowledge(entry)
                            } catch let error as MQTTError {
                                if case .shutDown = error { return }
                                self.refused.add(1, ordering: .relaxed)
                                logger.error("broker refused an event; it stays in the outbox", metadata: [
                                    "sequence": "\(entry.sequence)", "topic": "\(entry.topic)", "error": "\(error)"])
                            } catch {
                                logger.error("could not delete an acknowledged event", metadata: ["sequence": "\(entry.sequence)", "error": "\(error)"])
                            }
                        }
                    }
                }
            }
        } onCancelOrGracefulShutdown: { [wakeContinuation] in
            wakeContinuation.finish()
        }
    }
}
