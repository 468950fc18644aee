import AgentOutputs
import Foundation
import GeofenceStore
import Logging
import Mosquitto
import ServiceLifecycle
import Synchronization

/// Drains the outbox in sequence order through the MQTT client's bounded in-flight window. A row leaves
/// the outbox only when the broker acknowledged it with a reason below 0x80; anything not acknowledged
/// when the agent stops is sent again at the next start (consumers deduplicate by `eventId`).
/// Everything it reads, and every acknowledgement, goes through the `Outbox`, which owns them.
package final class OutboxPublisher: Service, Sendable {
    private let outbox: Outbox
    private let client: any OutboxTransport
    private let logger: Logger
    /// Told each acknowledgement's latency (Prometheus' histogram).
    private let outputs: MultiplexOutput

    init(outbox: Outbox, client: any OutboxTransport, outputs: MultiplexOutput = MultiplexOutput([]), logger: Logger) {
        self.outputs = outputs
        self.outbox = outbox
        self.client = client
        self.logger = logger
    }

    /// Has the outbox delete acknowledged entries every 20 ms, in one transaction per batch, until the
    /// publisher is cancelled (and once more then, so that nothing acknowledged is sent again at the next
    /// start).
    private func deleteAcknowledged() async {
        var failing = false
        while true {
            let stopping = Task.isCancelled
            do {
                try await outbox.deleteAcknowledged()
                failing = false
            } catch {
                // The outbox keeps them for the next round (a full disk frees up).
                if !failing {
                    logger.error(
                        "could not delete acknowledged events; retrying",
                        metadata: ["count": "\(outbox.acknowledgedWaiting)", "error": "\(error)"])
                }
                failing = true
            }
            if stopping { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// An entry handed to the client, and the ticket for its acknowledgement.
    private typealias Issued = (entry: OutboxEntry, ticket: any PublishAcknowledgement, at: ContinuousClock.Instant)

    /// Acknowledgements still awaited.
    private let awaiting = Atomic<Int>(0)
    /// How long a stopping publisher waits for acknowledgements in flight before it stops waiting
    /// (with the broker away they never come; their rows stay in the outbox for the next start).
    static let acknowledgementGrace: Duration = .seconds(1)

    /// Issues entries in sequence order until the wake stream ends or the task is cancelled.
    private func issue(into issued: AsyncStream<Issued>.Continuation) async {
        var issuedUpTo: Int64 = 0
        var wakes = outbox.wakes.makeAsyncIterator()
        while !Task.isCancelled {
            let batch: [OutboxEntry]
            do {
                batch = try await outbox.next(after: issuedUpTo)
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
                let ticket: any PublishAcknowledgement
                do {
                    ticket = try await client.issueInOrder(entry.topic, payload: entry.payload, retain: entry.retain)
                } catch {
                    // Stopping: what was not acknowledged stays in the outbox for next time.
                    logger.debug("outbox publisher stops", metadata: ["reason": "\(error)"])
                    return
                }
                issuedUpTo = entry.sequence
                awaiting.add(1, ordering: .relaxed)
                issued.yield((entry, ticket, ContinuousClock.now))
            }
        }
    }

    /// Awaits acknowledgements in issue order (the broker answers in that order) and queues each
    /// acknowledged entry for deletion.
    private func collectAcknowledgements(_ issued: AsyncStream<Issued>) async {
        for await (entry, ticket, issuedAt) in issued {
            defer { awaiting.subtract(1, ordering: .relaxed) }
            do {
                _ = try await ticket.acknowledgement()
                outputs.tell(.acknowledged(latency: ContinuousClock.now - issuedAt))
                outbox.acknowledged(entry)
            } catch .shutDown, .cancelled {
                return
            } catch {
                logger.error(
                    "broker refused an event; it stays in the outbox",
                    metadata: [
                        "sequence": "\(entry.sequence)", "topic": "\(entry.topic)", "error": "\(error)",
                    ])
            }
        }
    }

    /// Runs until graceful shutdown: issuing stops at once (it may be waiting for a broker that is
    /// away); acknowledgements in flight get `acknowledgementGrace`, then the last deletions are made.
    package func run() async throws {
        let (issued, issuedSink) = AsyncStream<Issued>.makeStream()
        await withDiscardingTaskGroup { group in
            group.addTask { await self.deleteAcknowledged() }
            group.addTask { await self.collectAcknowledgements(issued) }
            await withTaskCancellationOrGracefulShutdownHandler {
                await cancelWhenGracefulShutdown { await self.issue(into: issuedSink) }
            } onCancelOrGracefulShutdown: { [outbox] in
                outbox.stopWaking()
            }
            issuedSink.finish()
            let end = ContinuousClock.now + Self.acknowledgementGrace
            while awaiting.load(ordering: .relaxed) > 0, ContinuousClock.now < end {
                do { try await Task.sleep(for: .milliseconds(10)) } catch { break }
            }
            group.cancelAll()
        }
    }
}
