import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import ServiceLifecycle
import ThreadExecution

/// Where locations come from.
enum LocationFeed: Sendable {
    case gpsd(GPSLocationSource)
    case replay(GPXReplay)
    /// Locations handed over one by one (the in-process tests); the feed ends when the stream does.
    case scripted(AsyncStream<Location>)
}

/// Locations into the fix processor: gpsd's fixes and its receiver states, or a replayed drive. A replay
/// that ends with `exitAtEnd` lets the publisher deliver what the drive produced, then ends the agent.
final class FixService: Service, Sendable {
    let processor: FixProcessor
    let reporter: StateReporter
    let outbox: Outbox
    let source: LocationFeed
    let exitAtReplayEnd: Bool
    /// How long a replay that exits at its end waits for the outbox to empty (what is left stays for the
    /// next start).
    let drainTimeout: Duration

    init(
        processor: FixProcessor, reporter: StateReporter, outbox: Outbox, source: LocationFeed, exitAtReplayEnd: Bool,
        drainTimeout: Duration = .seconds(60)
    ) {
        self.processor = processor
        self.reporter = reporter
        self.outbox = outbox
        self.source = source
        self.exitAtReplayEnd = exitAtReplayEnd
        self.drainTimeout = drainTimeout
    }

    func run() async throws {
        switch source {
        case .gpsd(let gps):
            // Decided on the store's thread as gpsd's reports are read there.
            let delivery = FixDelivery(processor: processor)
            gps.deliverLocations(to: delivery)
            let statuses = gps.statusUpdates()
            let processor = self.processor
            let reporter = self.reporter
            await runUntilGracefulShutdown {
                await withDiscardingTaskGroup { group in
                    group.addTask {
                        for await s in statuses {
                            await processor.gps(s)
                            await reporter.publishStatus()
                        }
                    }
                    group.addTask { await processor.follow(delivery) }
                }
            }
            await processor.recordLastFixes()
        case .scripted(let locations):
            await follow(locations)
        case .replay(let replay):
            await processor.gps(
                GPSStatus(
                    state: .fix, detail: "replaying \(replay.points.count) points at \(replay.speedFactor)x",
                    device: "gpx"))
            let resumeAfter = await processor.lastAcceptedFixTime
            let processor = self.processor
            // Paced and decided on the processor's own thread: a fix wakes that thread alone.
            let executor = processor.storeExecutor
            let delivery = FixDelivery(
                processor: processor, onConsumerCancelled: { [weak executor] in executor?.wake() })
            replay.deliver(after: resumeAfter, on: executor, to: delivery)
            await runUntilGracefulShutdown { await processor.follow(delivery) }
            await processor.recordLastFixes()
            await processor.gps(GPSStatus(state: .noData, detail: "the replay ended", device: "gpx"))
            await afterTheFeedEnds()
        }
    }

    /// Each location decided in turn, its commits and messages queued before the next is taken.
    private func follow(_ locations: AsyncStream<Location>) async {
        await processor.gps(GPSStatus(state: .fix, detail: "locations handed over in process", device: "test"))
        let processor = self.processor
        await runUntilGracefulShutdown {
            await withTaskExecutorPreference(processor.storeExecutor) {
                for await location in locations { await processor.handle(location) }
            }
        }
        await processor.recordLastFixes()
        await afterTheFeedEnds()
    }

    /// A replay or handed-over feed that ended: with `exitAtEnd` the outbox is drained and the agent stops;
    /// else it runs on until the graceful shutdown.
    private func afterTheFeedEnds() async {
        if exitAtReplayEnd {
            await runUntilGracefulShutdown { await self.drainOutbox() }
        } else {
            try? await gracefulShutdown()
        }
    }

    private func drainOutbox() async {
        let end = ContinuousClock.now + drainTimeout
        while ContinuousClock.now < end, await outbox.stats.rows > 0 {
            do { try await Task.sleep(for: .milliseconds(50), clock: .serialTimer) } catch { return }
        }
    }
}
