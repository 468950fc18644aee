import Logging
import ServiceLifecycle
import Synchronization
import ThreadExecution

/// The reporter's loops. Every second, broker or not: retry waiting commits, answer a `reportLocation` no
/// fix has answered, tick the outbox (its acknowledgements and group commit), apply the CLI's inbox, write
/// the status file and publish the status when they changed (or their heartbeats are due); a second with
/// none of these to do costs a look. The round rides on the first fix's wake-up 0.9 s after the last one,
/// or wakes the thread itself at 1.1 s. When the conditions' state moves: the state, at once and at most four
/// times a second. Nothing else wakes it: on a vehicle every wakeup costs battery.
final class ReportingService: Service, Sendable {
    let processor: FixProcessor
    let applier: ChangeApplier
    let reporter: StateReporter
    let inbox: String
    /// Ticked in the same round (acknowledgements, group commit), when the publisher does not tick itself.
    let publisher: OutboxPublisher?
    /// The inbox's events as the kernel tells them: the round enters the applier only when one came.
    let inboxWatch: InboxWatch?

    /// The clock's looks at whether a round has work, and the rounds run (the first, at the start, with
    /// them): a test tells one from the other with them.
    let roundsLooked = Atomic<Int>(0)
    let roundsRun = Atomic<Int>(0)

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
            await runUntilGracefulShutdown(preferring: processor.storeExecutor) {
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

    /// Isolated to the processor, whose executor is the store's thread and the outbox's: its calls and the
    /// outbox's tick run inline, where a nonisolated round hopped to the processor and back for each (18 jobs
    /// a second on the store's thread, parked). Timed by a `RoundClock` on that thread, which rides on a
    /// fix's wake-up: each second it asks `roundHasWork` there, between jobs, and this loop runs a round
    /// only when the answer is yes. A parked second's round then resumes no task (a round in a task that
    /// slept between rounds cost about a quarter of a parked second's CPU).
    private func everySecond(on processor: isolated FixProcessor) async {
        let (due, dueSink) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let clock = RoundClock(
            interval: Self.roundInterval, tolerance: Self.roundTolerance,
            onDue: { [self] in
                roundsLooked.add(1, ordering: .relaxed)
                if processor.onStoreThread({ self.roundHasWork(on: $0) }) { dueSink.yield() }
            },
            onDetached: { dueSink.finish() })
        await round(on: processor)
        // False: the store's thread has ended (the agent stops).
        guard processor.storeExecutor.attach(clock) else { return }
        // Ends when the task is cancelled (the stop) or the clock is detached.
        for await _ in due { await round(on: processor) }
        clock.stop()
        processor.storeExecutor.wake()
    }

    /// Waiting commits retried, a `reportLocation` no fix answered, the outbox's tick (its acknowledgements
    /// and group commit), the CLI's inbox, and the status to the file and the broker when either is due.
    private func round(on processor: isolated FixProcessor) async {
        roundsRun.add(1, ordering: .relaxed)
        await processor.flushPending()
        await processor.answerOverdueReport()
        await publisher?.tick()
        if inboxWatch?.mayBeDue() ?? true { await applier.processInbox(inbox) }
        let inputs = reporter.roundInputs(await processor.statusInputs())
        if reporter.needsRound(inputs) { await reporter.reportStatus(inputs) }
    }

    /// Whether a round now would do anything, read without a suspension: each part of `round` that has
    /// nothing to do makes no change, so a round is skipped only when none has.
    private func roundHasWork(on processor: isolated FixProcessor) -> Bool {
        processor.roundHasWork || publisher?.tickMayHaveWork == true || inboxWatch?.mayBeDue() ?? true
            || reporter.needsRound(reporter.roundInputs(processor.statusInputsWithoutEnteringTheOutbox()))
    }

    /// The state when it moves, 250 ms after the last one at the earliest: the changes of that wait go in one
    /// message. A transition's state follows the transition in the same wake-up of this thread, right behind
    /// it on the wire (the commit lets the publisher send the event first), and a dashboard has it 250 ms
    /// sooner. Against a broker on loopback a transition then costs 0.3–0.4 ms less CPU (fewer wake-ups of
    /// libmosquitto's thread and of this one); over a link the difference was within the runs' spread.
    private func stateLoop() async {
        var changes = processor.stateChanges.makeAsyncIterator()
        await reporter.publishStateIfChanged()
        var lastEnded = ThreadExecutor.now()
        while !Task.isCancelled {
            guard await changes.next() != nil else { return }
            let earliest = lastEnded &+ Self.stateSpacing
            if ThreadExecutor.now() < earliest {
                do { try await processor.storeExecutor.sleep(until: earliest) } catch { return }
            }
            await reporter.publishStateIfChanged()
            lastEnded = ThreadExecutor.now()
        }
    }

    /// The least time from one state's end (its PUBACK, its failure, or nothing to send) to the next one's
    /// start, in the executor's nanoseconds: four a second at most, and on a slow link no more than one per
    /// round trip.
    static let stateSpacing: UInt64 = 250_000_000
}
