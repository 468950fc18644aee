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
    /// Acknowledged entries waiting to leave the outbox; deleted in batches, one transaction each.
    private let acknowledged = Mutex<[OutboxEntry]>([])
    /// Entries just committed, handed over so that the next event does not wait for a read of the store.
    private let handOff = Mutex(HandOff())

    private struct HandOff {
        var entries: [OutboxEntry] = []
        /// The store's count of entries dropped at the caps when the last entries were handed over.
        var dropped: Int64 = 0
    }

    /// More than this waiting means the publisher is behind (broker away): the store has them.
    static let maximumHandOff = 256

    public init(store: AgentStore, client: MQTTClient, logger: Logger) {
        self.store = store
        self.client = client
        self.logger = logger
        (wakeStream, wakeContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// New rows are in the outbox.
    public func wake() { wakeContinuation.yield() }

    /// New rows are in the outbox, and these are they, as the commit returned them. `dropped` is the
    /// store's count of entries dropped at the caps: when it moved, rows handed over may be gone, so
    /// they are forgotten and the store is read instead.
    public func deliver(_ entries: [OutboxEntry], dropped: Int64) {
        guard !entries.isEmpty else { return }
        handOff.withLock { h in
            if h.dropped != dropped || h.entries.count + entries.count > Self.maximumHandOff {
                h.entries.removeAll()
                h.dropped = dropped
            } else {
                h.entries += entries
            }
        }
        wake()
    }

    /// What to issue next, in sequence order: the entries handed over when they follow on directly from
    /// the last one issued (nothing else can sit between them), else a read of the store, which is the
    /// record (at the start, after a gap, or when the hand-over was skipped).
    private func next(after issuedUpTo: Int64) async throws(StoreError) -> [OutboxEntry] {
        let handed = handOff.withLock { h -> [OutboxEntry] in
            defer { h.entries.removeAll() }
            return h.entries
        }.filter { $0.sequence > issuedUpTo }.sorted { $0.sequence < $1.sequence }
        let contiguous = zip(handed, handed.dropFirst()).allSatisfy { $1.sequence == $0.sequence + 1 }
        if let first = handed.first, issuedUpTo > 0, first.sequence == issuedUpTo + 1, contiguous { return handed }
        return try await store.pending(after: issuedUpTo, limit: 256)
    }

    /// Deletes acknowledged entries every 20 ms, in one transaction per batch, until the publisher stops
    /// (and once more then, so that nothing acknowledged is sent again at the next start).
    private func deleteAcknowledged() async {
        var failing = false
        while true {
            let stopping = Task.isCancelled || Task.isShuttingDownGracefully
            let batch = acknowledged.withLock { list -> [OutboxEntry] in
                defer { list.removeAll() }
                return list
            }
            if !batch.isEmpty {
                do {
                    try await store.acknowledge(batch)
                    failing = false
                } catch {
                    // Kept for the next round (a full disk frees up): dropped, they would stay in the
                    // outbox, sent already and never deleted, until the next start sent them again.
                    acknowledged.withLock { $0.insert(contentsOf: batch, at: 0) }
                    if !failing { logger.error("could not delete acknowledged events; retrying", metadata: ["count": "\(batch.count)", "error": "\(error)"]) }
                    failing = true
                }
            }
            if stopping { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    public func run() async throws {
        await withTaskCancellationOrGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.deleteAcknowledged() }
                var issuedUpTo: Int64 = 0
                var wakes = wakeStream.makeAsyncIterator()
                while !Task.isCancelled {
                    let batch: [OutboxEntry]
                    do {
                        batch = try await next(after: issuedUpTo)
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
                        group.addTask { [logger] in
                            do {
                                _ = try await ticket.acknowledgement()
                                self.acknowledged.withLock { $0.append(entry) }
                            } catch let error as MQTTError {
                                if case .shutDown = error { return }
                                logger.error("broker refused an event; it stays in the outbox", metadata: [
                                    "sequence": "\(entry.sequence)", "topic": "\(entry.topic)", "error": "\(error)"])
                            } catch {
                                logger.error("unexpected failure waiting for an acknowledgement", metadata: ["sequence": "\(entry.sequence)", "error": "\(error)"])
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
