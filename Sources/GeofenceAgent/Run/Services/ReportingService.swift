import Logging
import ServiceLifecycle

/// The reporter's timers. Every second, broker or not: retry waiting commits, apply the CLI's inbox,
/// write the status file; every 15 s node_exporter's textfile, when configured. Every 250 ms while
/// connected: the state when it changed; every 10 s the status.
final class ReportingService: Service, Sendable {
    let processor: FixProcessor
    let applier: ChangeApplier
    let reporter: StateReporter
    let inbox: String
    let metrics: AgentMetrics?
    let textfile: MetricsTextfile?
    let logger: Logger

    init(processor: FixProcessor, applier: ChangeApplier, reporter: StateReporter, inbox: String, metrics: AgentMetrics?,
         textfile: MetricsTextfile?, logger: Logger) {
        self.processor = processor
        self.applier = applier
        self.reporter = reporter
        self.inbox = inbox
        self.metrics = metrics
        self.textfile = textfile
        self.logger = logger
    }

    func run() async {
        await reporter.start(metrics: metrics)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.localLoop() }
                group.addTask { await self.brokerLoop() }
            }
        }
    }

    private func localLoop() async {
        var tick = 0
        while !Task.isCancelled {
            await processor.flushPending()
            await applier.processInbox(inbox)
            await reporter.writeStatusFile(online: true)
            if let textfile, let metrics, tick % 15 == 0 {
                do { try textfile.write(metrics.text()) } catch {
                    logger.warning("metrics textfile not written", metadata: ["path": "\(textfile.path)", "error": "\(error)"])
                }
            }
            tick += 1
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
        }
    }

    private func brokerLoop() async {
        var tick = 0
        while !Task.isCancelled {
            await reporter.publishStateIfChanged()
            if tick % 40 == 0 { await reporter.publishStatus() }
            tick += 1
            do { try await Task.sleep(for: .milliseconds(250)) } catch { return }
        }
    }
}
