import Foundation
import ThreadExecution

/// gpsd's reports read on a `ThreadExecutor`'s thread between its jobs, while the connection lasts: the
/// executor waits for the socket and the pipeline's next deadline in the same wait as for its jobs. The
/// reader thread hands the connection and the pipeline over, waits, and takes them back when the source is
/// detached: one thread uses them at a time.
final class ExecutorReading: ThreadExecutorSource, @unchecked Sendable {
    private let connection: GPSConnection
    private(set) var pipeline: GPSPipeline
    private unowned let owner: GPSLocationSource
    /// Why the reading ended, when the connection failed.
    private var failure: GPSError?
    private let ended = DispatchSemaphore(value: 0)

    private init(_ connection: GPSConnection, _ pipeline: GPSPipeline, owner: GPSLocationSource) {
        self.connection = connection
        self.pipeline = pipeline
        self.owner = owner
    }

    /// Reads on `executor` until the owner stops (true) or the connection fails (throws). False, with
    /// nothing read since, when the executor has ended: the caller reads on its own thread instead.
    static func read(
        _ connection: GPSConnection, _ pipeline: inout GPSPipeline, on executor: ThreadExecutor,
        for owner: GPSLocationSource
    ) throws(GPSError) -> Bool {
        let reading = ExecutorReading(connection, pipeline, owner: owner)
        guard executor.attach(reading) else { return false }
        reading.ended.wait()
        pipeline = reading.pipeline
        if let failure = reading.failure { throw failure }
        return owner.stopRequested
    }

    func nextWait() -> ThreadExecutorWait? {
        guard failure == nil, !owner.stopRequested else { return nil }
        // No periodic wake: a stop wakes the executor itself.
        return ThreadExecutorWait(descriptor: connection.descriptor, deadline: pipeline.nextDeadline)
    }

    func fire(readable: Bool) {
        do {
            if readable {
                try connection.read(waitingUpTo: 0) { message, receivedAt in
                    owner.emit(pipeline.handle(message, now: receivedAt))
                }
            }
            owner.emit(pipeline.tick(now: MonotonicClock.now()))
        } catch {
            failure = error
        }
    }

    func detached() { ended.signal() }
}
