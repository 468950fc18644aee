import Logging
import ServiceLifecycle

/// The reporter's timers. Every second, broker or not: retry waiting commits, apply the CLI's inbox,
/// write the status file when it changed. Every 250 ms while connected: the state when it changed; every
/// second the status when it changed (or its heartbeat is due).
final class ReportingService: Service, Sendable {
    let processor: FixProcessor
    let applier: ChangeApplier
    let reporter: StateReporter
    let inbox: String

    init(processor: FixProcessor, applier: ChangeApplier, reporter: StateReporter, inbox: String) {
        self.processor = processor
        self.applier = applier
        self.reporter = reporter
        self.inbox = inbox
    }

    func run() async {
        await reporter.start()
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.localLoop() }
                group.addTask { await self.brokerLoop() }
            }
        }
    }

    private func localLoop() async {
        while !Task.isCancelled {
            await processor.flushPending()
            await applier.processInbox(inbox)
            await reporter.writeStatusFile(online: true)
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
        }
    }

    private func brokerLoop() async {
        var tick = 0
        while !Task.isCancelled {
            await reporter.publishStateIfChanged()
            if tick % 4 == 0 { await reporter.publishStatus() }
            tick += 1
            do { try await Task.sleep(for: .milliseconds(250)) } catch { return }
        }
    }
}
