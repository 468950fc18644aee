import AsyncBroadcast
import Foundation
import GeofenceCore
import Logging
import ServiceLifecycle
import Synchronization
import ThreadExecution

/// Locations from gpsd (libgps connects; `GPSDReportDecoder` reads the reports), coalesced per epoch,
/// with reconnection, a no-data watchdog and a status. A `Service`: `run()` reads until graceful shutdown
/// or cancellation.
///
/// The libgps connection lives on one dedicated thread, which also runs the pure pipeline, so that
/// blocking C calls never occupy Swift's cooperative pool. Given a `ThreadExecutor` (the agent's store
/// thread, where its fix processor runs), the reading is handed to that thread while connected: it waits
/// for gpsd's socket between its jobs, so that a report wakes one thread, the one that handles the fix.
/// Connecting and the back-off between attempts stay on the reader thread.
public final class GPSLocationSource: Service, Sendable {
    public let configuration: GPSSourceConfiguration
    private let logger: Logger
    /// Where the reports are read while connected; nil: on the reader thread.
    private let readingExecutor: ThreadExecutor?
    private let locationBroadcast = Broadcaster<Location>()
    private let statusBroadcast = Broadcaster<GPSStatus>()
    private let state = Mutex(SharedState())

    private struct SharedState {
        var status = GPSStatus(state: .connecting)
        var stopRequested = false
        var started = false
    }

    /// A source for `configuration`; with `executor`, its reports are read on that executor's thread while
    /// connected.
    public init(configuration: GPSSourceConfiguration, logger: Logger, readingOn executor: ThreadExecutor? = nil) {
        self.configuration = configuration
        self.logger = logger
        readingExecutor = executor
    }

    /// Every location delivered from now on. Subscribe before `run()` to miss none.
    public func locations() -> AsyncStream<Location> { locationBroadcast.stream() }

    /// Every location delivered from now on, through a channel specialized for it: what the agent's fix
    /// path follows, where an `AsyncStream` cost a type metadata lookup per hand-over.
    public func locationChannel() -> UnboundedChannel<Location> { locationBroadcast.channel() }

    /// Hands every location from now on to `sink` on the thread that reads it (the executor's, while
    /// connected), until the sink is finished; the source finishes it when it stops.
    public func deliverLocations(to sink: any ElementSink<Location>) { locationBroadcast.attach(sink) }

    /// Every status change from now on.
    public func statusUpdates() -> AsyncStream<GPSStatus> { statusBroadcast.stream() }

    /// The latest status.
    public var status: GPSStatus { state.withLock { $0.status } }

    public func run() async throws {
        let claimed = state.withLock { s -> Bool in
            defer { s.started = true }
            return !s.started
        }
        guard claimed else { return }
        await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let thread = Thread { [self] in
                    readLoop()
                    done.resume()
                }
                thread.name = "gpsd-reader"
                thread.start()
            }
        } onCancelOrGracefulShutdown: {
            self.stop()
        }
    }

    /// Asks the reader thread to end; `run()` returns once it has.
    public func stop() {
        state.withLock { $0.stopRequested = true }
        readingExecutor?.wake()
    }

    var stopRequested: Bool { state.withLock { $0.stopRequested } }

    private func readLoop() {
        var pipeline = GPSPipeline(configuration: configuration)
        let connection = GPSConnection()
        var backoff = configuration.initialBackoff
        let host = configuration.host
        let port = String(configuration.port)
        while !stopRequested {
            do {
                try connection.open(host: host, port: port)
                try connection.watch(device: configuration.device)
            } catch {
                connection.close()
                emit(pipeline.connectFailed(error))
                logger.debug("gpsd unavailable", metadata: ["reason": "\(error)", "retry_s": "\(backoff)"])
                sleepUnlessStopped(seconds: backoff)
                backoff = min(backoff * 2, configuration.maximumBackoff)
                continue
            }
            backoff = configuration.initialBackoff
            logger.info(
                "watching gpsd", metadata: ["gpsd": "\(host):\(port)", "device": "\(configuration.device ?? "any")"])
            emit(pipeline.connected(now: MonotonicClock.now()))
            do {
                if try !readOnExecutor(connection, &pipeline) { try readMessages(connection, &pipeline) }
            } catch {
                connection.close()
                logger.warning("gpsd connection lost", metadata: ["reason": "\(error)"])
                emit(pipeline.disconnected(error))
                // gpsd may be restarting: try again at once, then back off.
            }
        }
        connection.close()
        emit(pipeline.stopped())
        locationBroadcast.finish()
        statusBroadcast.finish()
    }

    /// Reads on the executor until the stop. False, having read nothing, without one (or once it has ended).
    private func readOnExecutor(_ connection: GPSConnection, _ pipeline: inout GPSPipeline) throws(GPSError) -> Bool {
        guard let readingExecutor else { return false }
        return try ExecutorReading.read(connection, &pipeline, on: readingExecutor, for: self)
    }

    private func readMessages(_ connection: GPSConnection, _ pipeline: inout GPSPipeline) throws(GPSError) {
        while !stopRequested {
            let now = MonotonicClock.now()
            let deadline = pipeline.nextDeadline ?? .max
            let wait = deadline > now ? (deadline - now) / 1000 : 0
            // One read carries every report gpsd has sent since the last: they share its time. At most
            // 100 ms, so that a stop is seen.
            try connection.read(waitingUpTo: Int32(min(wait, 100_000))) { message, receivedAt in
                emit(pipeline.handle(message, now: receivedAt))
            }
            emit(pipeline.tick(now: MonotonicClock.now()))
        }
    }

    func emit(_ outputs: [GPSOutput]) {
        if outputs.isEmpty { return }
        for output in outputs {
            switch output {
            case .location(let location):
                locationBroadcast.yield(location)
            case .status(let status):
                state.withLock { $0.status = status }
                logger.info(
                    "gps status", metadata: ["state": "\(status.state.rawValue)", "detail": "\(status.detail ?? "")"])
                statusBroadcast.yield(status)
            }
        }
    }

    private func sleepUnlessStopped(seconds: Double) {
        let end = MonotonicClock.now() + UInt64(seconds * 1e9)
        while !stopRequested, MonotonicClock.now() < end { usleep(10_000) }
    }
}
