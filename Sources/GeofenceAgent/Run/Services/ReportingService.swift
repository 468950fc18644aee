import Logging
import ServiceLifecycle
import ThreadExecution

/// The reporter's loops. Every second, broker or not: retry waiting commits, answer a `reportLocation` no
/// fix has answered, tick the outbox (its acknowledgements and group commit), apply the CLI's inbox, write
/// the status file and publish the status when they changed (or their heartbeats are due). The round rides
/// on the first fix's wake-up 0.9 s after the last one, or wakes the thread itself at 1.1 s. When the
/// conditions' state moves: the state, at most four times a second. Nothing else wakes it: on a vehicle
/// every wakeup costs battery.
final class ReportingService: Service, Sendable {
    let processor: FixProcessor
    let applier: ChangeApplier
    let reporter: StateReporter
    let inbox: String
    /// Ticked in the same round (acknowledgements, group commit), when the publisher does not tick itself.
    let publisher: OutboxPublisher?
    /// The inbox's events as the kernel tells them: the round enters the applier only when one came.
    let inboxWatch: InboxWatch?

    init(
        processor: FixProcessor, applier: ChangeApplier, reporter: StateReporter, inbox: String,
        publisher: OutboxPublisher? = nil, inboxWatch: InboxWatch? = nil
    ) {
        self.publisher = publisher
        self.inboxWatch = inboxWatch
        self.processor = processor
        self.applier = applier
        self.reporter = reporter
        self.inbox = inbox
    }

    func run() async {
        await reporter.start()
        // On the processor's thread: a round reads its snapshot there, and a state change wakes no other thread.
        await withTaskExecutorPreference(processor.storeExecutor) {
            await cancelWhenGracefulShutdown {
                await withDiscardingTaskGroup { group in
                    group.addTask { await self.everySecond(on: self.processor) }
                    group.addTask { await self.stateLoop() }
                }
            }
        }
    }

    /// A round comes this long after the last one at the earliest (nanoseconds, the executor's clock: no
    /// `Duration` arithmetic a round): a little less than a second, so that the fix due a second after the one
    /// the last round rode on still takes it.
    static let roundInterval: UInt64 = 900_000_000
    /// And at the latest this much later, with no fix to ride on.
    static let roundTolerance: UInt64 = 200_000_000

    /// Isolated to the processor, whose executor is the store's thread and the outbox's: its calls, the
    /// outbox's tick and the sleep run inline, where a nonisolated round hopped to the processor and back
    /// for each (18 jobs a second on the store's thread, parked). The applier and the reporter are entered
    /// only when the inbox or the status has something to do.
    private func everySecond(on processor: isolated FixProcessor) async {
        while !Task.isCancelled {
            await processor.flushPending()
            await processor.answerOverdueReport()
            await publisher?.tick()
            if inboxWatch?.mayBeDue() ?? true { await applier.processInbox(inbox) }
            let inputs = reporter.roundInputs(await processor.statusInputs())
            if reporter.needsRound(inputs) { await reporter.reportStatus(inputs) }
            // Timed by the store's thread itself, and riding on a fix's wake-up: at 1 Hz the next fix comes
            // within the tolerance, so the round wakes nothing of its own (its own wake-up only when the
            // receiver is silent).
            do {
                try await processor.storeExecutor.sleep(
                    until: ThreadExecutor.now() + Self.roundInterval, tolerance: Self.roundTolerance)
            } catch { return }
        }
    }

    /// The state 250 ms after it moves, not at once: the transition that moved it goes out first, alone,
    /// and the changes of those 250 ms go in one message.
    private func stateLoop() async {
        var changes = processor.stateChanges.makeAsyncIterator()
        await reporter.publishStateIfChanged()
        while !Task.isCancelled {
            guard await changes.next() != nil else { return }
            do { try await processor.storeExecutor.sleep(for: .milliseconds(250)) } catch { return }
            await reporter.publishStateIfChanged()
        }
    }
}
