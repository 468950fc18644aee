import AgentOutputs
import Foundation
import GeofenceStore
import Logging
import Mosquitto
import ServiceLifecycle
import Synchronization
import ThreadExecution

/// Drains the outbox through the MQTT client's bounded in-flight window: transitions first, in sequence
/// order, then droppable rows in theirs. A row leaves the outbox only when the broker acknowledged it with a
/// reason below 0x80; anything not acknowledged when the agent stops is sent again at the next start
/// (consumers deduplicate by `eventId`).
/// Everything it reads, and every acknowledgement, goes through the `Outbox`, which owns them.
package final class OutboxPublisher: Service, Sendable {
    private let outbox: Outbox
    private let client: any OutboxTransport
    private let logger: Logger
    /// Told each acknowledgement's latency (Prometheus' histogram).
    private let outputs: MultiplexOutput

    /// Where its loops run (the outbox's thread in the agent): a row written wakes no other thread to be
    /// issued, and an acknowledgement wakes only that one. Nil: Swift's pool.
    private let executor: (any TaskExecutor)?

    init(
        outbox: Outbox, client: any OutboxTransport, outputs: MultiplexOutput = MultiplexOutput([]),
        runsOn executor: (any TaskExecutor)? = nil, ticksItself: Bool = true, logger: Logger
    ) {
        self.executor = executor
        self.ticksItself = ticksItself
        self.outputs = outputs
        self.outbox = outbox
        self.client = client
        self.logger = logger
    }

    /// Whether its own loop calls `tick()` every second; the agent's reporting round calls it instead, so
    /// that one timer, not two, wakes the vehicle each second.
    private let ticksItself: Bool
    /// A deletion failed at the last tick (it is logged once, not every second).
    private let tickFailing = Atomic<Bool>(false)

    /// The outbox's tick, once a second: it takes in the acknowledgements, deletes what it must and makes
    /// its group commit when due. An acknowledgement itself wakes nothing (the outbox takes them in at its
    /// next operation), and no timer runs faster than once a second: on a vehicle every wakeup costs
    /// battery. `run()` makes the last deletions and group commit after the last tick.
    /// Runs in the caller's isolation: the round, isolated to the fix processor on the outbox's thread,
    /// reaches the outbox without a hop.
    package func tick(isolation: isolated (any Actor)? = #isolation) async {
        do {
            try await outbox.deleteAcknowledged()
            tickFailing.store(false, ordering: .relaxed)
        } catch {
            // The outbox keeps them for the next round (a full disk frees up).
            if !tickFailing.exchange(true, ordering: .relaxed) {
                logger.error(
                    "could not delete acknowledged events; retrying",
                    metadata: ["count": "\(outbox.acknowledgedWaiting)", "error": "\(error)"])
            }
        }
    }

    /// Whether a `tick()` now may do anything (the outbox's `tickMayHaveWork`): the round's gate asks every
    /// second, and enters nothing when the answer is no.
    /// Read on the outbox's executor only (the round runs there), where it enters the outbox without a hop.
    package var tickMayHaveWork: Bool { outbox.assumeIsolated { $0.tickMayHaveWork } }

    private func tickEverySecond() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: .seconds(1), clock: .serialTimer) } catch { return }
            await tick()
        }
    }

    /// The stop's last deletions, and the group commit of what the broker has not acknowledged of the
    /// track: it is stored for the next start.
    private func finish() async {
        do { try await outbox.deleteAcknowledged() } catch {
            logger.error("could not delete acknowledged events", metadata: ["error": "\(error)"])
        }
        do { try await outbox.groupCommit() } catch {
            logger.error("could not store the track's last rows", metadata: ["error": "\(error)"])
        }
    }

    /// An entry handed to the client, and the ticket for its acknowledgement.
    private typealias Issued = (entry: OutboxEntry, ticket: any PublishAcknowledgement, at: ContinuousClock.Instant)

    /// Acknowledgements still awaited.
    private let awaiting = Atomic<Int>(0)
    /// How long a stopping publisher waits for acknowledgements in flight before it stops waiting
    /// (with the broker away they never come; their rows stay in the outbox for the next start).
    static let acknowledgementGrace: Duration = .seconds(1)

    /// Droppable entries handed to the client and not yet acknowledged, at most: libmosquitto sends what it
    /// is handed in order, so a transition made now waits behind no more than these (and the transitions
    /// before it), however much of the track an outage gathered.
    static let droppableWindow = 8
    /// Droppable entries read ahead of the window: among them, a retained one with a newer one for its
    /// topic is not sent (`superseded`).
    static let droppableLookahead = 64
    /// Droppable entries issued and not yet acknowledged (or refused).
    private let droppableAwaiting = Atomic<Int>(0)

    /// Issues entries until the wake stream ends or the task is cancelled: every transition waiting first,
    /// in sequence order, then droppable entries in theirs while fewer than `droppableWindow` of them await
    /// their acknowledgement (the acknowledgement that makes room wakes it). Transitions never wait behind
    /// the track's backlog after an outage.
    private func issue(into issued: AsyncStream<Issued>.Continuation) async {
        // Per kind, the last sequence read from the outbox: nil until its repository was read once.
        var readUpTo: [OutboxEntry.Kind: Int64?] = [.transition: nil, .location: nil]
        // Droppable entries read and not issued yet, in their order.
        var held: [OutboxEntry] = []
        var wakes = outbox.wakes.makeAsyncIterator()
        while !Task.isCancelled {
            var batch: [OutboxEntry] = []
            do {
                batch = try await outbox.next(.transition, after: readUpTo[.transition]!)
                if readUpTo[.transition]! == nil { readUpTo[.transition] = 0 }
                if batch.isEmpty, held.isEmpty, droppableAwaiting.load(ordering: .relaxed) < Self.droppableWindow {
                    held = try await outbox.next(.location, after: readUpTo[.location]!, limit: Self.droppableLookahead)
                    readUpTo[.location] = held.last?.sequence ?? readUpTo[.location]! ?? 0
                }
            } catch {
                logger.error("outbox read failed", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1), clock: .serialTimer)
                continue
            }
            var skipped = false
            if batch.isEmpty { (batch, skipped) = droppableToIssue(from: &held) }
            // All read were superseded: there may be more to read.
            if batch.isEmpty && skipped { continue }
            if batch.isEmpty {
                // Woken by new rows and by room in the window; the stream ends when the agent stops.
                guard await wakes.next() != nil else { return }
                continue
            }
            for entry in batch {
                if entry.kind == .transition { readUpTo[.transition] = entry.sequence }
                let ticket: any PublishAcknowledgement
                do {
                    ticket = try await client.issueInOrder(entry.topic, payload: entry.payload, retain: entry.retain)
                } catch {
                    // Stopping: what was not acknowledged stays in the outbox for next time.
                    logger.debug("outbox publisher stops", metadata: ["reason": "\(error)"])
                    return
                }
                awaiting.add(1, ordering: .relaxed)
                if entry.kind == .location { droppableAwaiting.add(1, ordering: .relaxed) }
                issued.yield((entry, ticket, ContinuousClock.now))
            }
        }
    }

    /// The held droppable entries that fit in the window's room, taken from `held`; a superseded one is
    /// acknowledged on the way, unsent (`skipped`).
    private func droppableToIssue(from held: inout [OutboxEntry]) -> (taken: [OutboxEntry], skipped: Bool) {
        var room = Self.droppableWindow - droppableAwaiting.load(ordering: .relaxed)
        var taken: [OutboxEntry] = []
        var skipped = false
        while room > 0, !held.isEmpty {
            let entry = held.removeFirst()
            if superseded(entry, by: held[...]) {
                outbox.acknowledged(entry)
                skipped = true
                continue
            }
            taken.append(entry)
            room -= 1
        }
        return (taken, skipped)
    }

    /// A retained droppable entry with a newer one for its topic waiting behind it: the broker keeps only
    /// the newest, so after an outage only that one is sent (the track's batches are not retained).
    private func superseded(_ entry: OutboxEntry, by later: ArraySlice<OutboxEntry>) -> Bool {
        entry.kind == .location && entry.retain && later.contains { $0.retain && $0.topic == entry.topic }
    }

    /// Awaits acknowledgements in issue order (the broker answers in that order) and queues each
    /// acknowledged entry for deletion.
    private func collectAcknowledgements(_ issued: AsyncStream<Issued>) async {
        for await (entry, ticket, issuedAt) in issued {
            defer {
                awaiting.subtract(1, ordering: .relaxed)
                // The issuer may be waiting for this room: a wake is kept until it looks.
                if entry.kind == .location,
                    droppableAwaiting.subtract(1, ordering: .relaxed).newValue == Self.droppableWindow - 1
                {
                    outbox.wake()
                }
            }
            do {
                _ = try await ticket.acknowledgement()
                outputs.count(.acknowledged(latency: ContinuousClock.now - issuedAt))
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
        await withTaskExecutorPreference(executor) { await self.runLoops() }
    }

    private func runLoops() async {
        let (issued, issuedSink) = AsyncStream<Issued>.makeStream()
        await withDiscardingTaskGroup { group in
            if ticksItself { group.addTask { await self.tickEverySecond() } }
            group.addTask { await self.collectAcknowledgements(issued) }
            await withTaskCancellationOrGracefulShutdownHandler {
                await runUntilGracefulShutdown(preferring: self.executor) { await self.issue(into: issuedSink) }
            } onCancelOrGracefulShutdown: { [outbox] in
                outbox.stopWaking()
            }
            issuedSink.finish()
            let end = ContinuousClock.now + Self.acknowledgementGrace
            while awaiting.load(ordering: .relaxed) > 0, ContinuousClock.now < end {
                do { try await Task.sleep(for: .milliseconds(10), clock: .serialTimer) } catch { break }
            }
            group.cancelAll()
        }
        await finish()
    }
}
