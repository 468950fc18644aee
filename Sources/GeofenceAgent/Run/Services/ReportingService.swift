import Logging
import ServiceLifecycle

/// The reporter's loops. Every second, broker or not: retry waiting commits, answer a `reportLocation`
/// no fix has answered, tick the outbox (its acknowledgements and group commit), apply the CLI's inbox,
/// write the status file and publish the status when they changed (or their heartbeats are due). When the
/// conditions' state moves: the state, at most four times a second. Nothing else wakes it: on a vehicle
/// every wakeup costs battery.
final class ReportingService: Service, Sendable {
    let processor: FixProcessor
    let applier: ChangeApplier
    let reporter: StateReporter
    let inbox: String
    /// Ticked in the same round (acknowledgements, group commit), when the publisher does not tick itself.
    let publisher: OutboxPublisher?

    init(
        processor: FixProcessor, applier: ChangeApplier, reporter: StateReporter, inbox: String,
        publisher: OutboxPublisher? = nil
    ) {
        self.publisher = publisher
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
                    group.addTask { await self.everySecond() }
                    group.addTask { await self.stateLoop() }
                }
            }
        }
    }

    private func everySecond() async {
        while !Task.isCancelled {
            await processor.flushPending()
            await processor.answerOverdueReport()
            await publisher?.tick()
            await applier.processInbox(inbox)
            await reporter.reportStatus()
            // Timed by the store's thread itself: a round wakes that thread alone.
            do { try await processor.storeExecutor.sleep(for: .seconds(1)) } catch { return }
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
