import AgentFormats
import AsyncBroadcast
import Foundation
import GeofenceCore
import Synchronization
import ThreadExecution

/// Replays a GPX track as a location source, as Xcode replays GPX files: each point is delivered after
/// the time between it and the previous one, divided by `speedFactor`. Points without times are 1 s
/// apart. Locations keep the track's times, so monitors see the drive as it happened.
package struct GPXReplay: Sendable {
    package let points: [GPXPoint]
    package let speedFactor: Double
    package let horizontalAccuracy: Double

    package init(points: [GPXPoint], speedFactor: Double = 1, horizontalAccuracy: Double = 5) throws(AgentError) {
        guard speedFactor.isFinite, speedFactor > 0 else {
            throw AgentError("the replay speed factor must be a positive number, got \(speedFactor)")
        }
        guard horizontalAccuracy.isFinite, horizontalAccuracy >= 0 else {
            throw AgentError("the replay accuracy must be a non-negative number of metres, got \(horizontalAccuracy)")
        }
        guard !points.isEmpty else { throw AgentError("the GPX file has no track, route or waypoint to replay") }
        self.points = points
        self.speedFactor = speedFactor
        self.horizontalAccuracy = horizontalAccuracy
    }

    package init(path: String, speedFactor: Double = 1, horizontalAccuracy: Double = 5) throws(AgentError) {
        try self.init(points: GPXTrack.load(path), speedFactor: speedFactor, horizontalAccuracy: horizontalAccuracy)
    }

    /// The locations with the track's own times (1 s apart from the first time where one is missing).
    package var locations: [Location] {
        var last: Date?
        let base = points.first?.time ?? Date(timeIntervalSince1970: 0)
        let speeds = points.speeds
        return zip(points, speeds).map { p, speed in
            let time =
                p.time.flatMap { t in last.map { t > $0 ? t : $0.addingTimeInterval(1) } ?? t }
                ?? last?.addingTimeInterval(1) ?? base
            last = time
            return Location(
                coordinate: Coordinate(latitude: p.latitude, longitude: p.longitude), altitudeHAE: p.elevation,
                horizontalAccuracy: horizontalAccuracy, speed: speed, course: p.course ?? -1,
                timestamp: time, gpsTime: p.time, mode: .threeD, device: "gpx")
        }
    }

    /// Delivers the locations in (scaled) real time; the stream ends after the last point. With `after`,
    /// the drive resumes after that time, as a vehicle does not rewind when its agent restarts.
    ///
    /// The pacing waits on `executor`'s thread between its jobs, when one is given (the store's, where the
    /// fix processor runs): a fix then wakes that one thread. Otherwise it runs on a thread of its own, as
    /// gpsd's reader does: a fix wakes that thread and then its consumer. (A sleeping task would wake the
    /// timer thread, a pool thread, then the consumer's: on a vehicle every thread switch costs battery.)
    /// Ending the stream stops the pacing at once.
    package func stream(after: Date? = nil, pacedOn executor: ThreadExecutor? = nil) -> UnboundedChannel<Location> {
        let schedule = schedule(after: after)
        guard let executor else { return Self.paceOnOwnThread(schedule) }
        let channel = UnboundedChannel<Location>(onConsumerCancelled: { [weak executor] in executor?.wake() })
        deliver(schedule, on: executor, to: channel)
        return channel
    }

    /// Delivers the locations in (scaled) real time to `sink`, on `executor`'s thread between its jobs, and
    /// finishes it after the last point (or at once when the executor has ended). With `after`, as `stream`.
    /// The pacing stops once the sink is finished; whoever finishes it from another thread then wakes the
    /// executor.
    package func deliver(after: Date? = nil, on executor: ThreadExecutor, to sink: any ElementSink<Location>) {
        deliver(schedule(after: after), on: executor, to: sink)
    }

    private func deliver(_ schedule: ReplaySchedule, on executor: ThreadExecutor, to sink: any ElementSink<Location>) {
        if !executor.attach(ReplaySource(schedule, into: sink)) { sink.finish() }
    }

    private func schedule(after: Date?) -> ReplaySchedule {
        let locations = after.map { t in self.locations.filter { $0.timestamp > t } } ?? self.locations
        return ReplaySchedule(locations, speedFactor: speedFactor)
    }

    private static func paceOnOwnThread(_ schedule: ReplaySchedule) -> UnboundedChannel<Location> {
        let pacer = ReplayPacer()
        let channel = UnboundedChannel<Location>(onConsumerCancelled: { pacer.end() })
        let thread = Thread {
            defer { channel.finish() }
            let start = DispatchTime.now().uptimeNanoseconds
            for (location, offset) in zip(schedule.locations, schedule.offsets) {
                // A consumer that went away ends the replay at its next fix.
                guard !channel.isFinished, pacer.wait(until: DispatchTime(uptimeNanoseconds: start + offset))
                else { return }
                channel.yield(location)
            }
        }
        thread.name = "gpx-replay"
        thread.start()
        return channel
    }
}

/// The locations of a replay and when each is due, in nanoseconds after the first.
struct ReplaySchedule: Sendable {
    let locations: [Location]
    let offsets: [UInt64]

    init(_ locations: [Location], speedFactor: Double) {
        self.locations = locations
        let origin = locations.first?.timestamp
        offsets = locations.map { location in
            let seconds = origin.map { location.timestamp.timeIntervalSince($0) / speedFactor } ?? 0
            return UInt64(min(max(seconds, 0) * 1e9, Double(UInt64.max / 4)))
        }
    }
}

/// A replay paced by a `ThreadExecutor`'s thread: each fix is due at a deadline that thread waits for
/// between its jobs, and is handed to the sink there (a channel enqueues its consumer's job from that
/// thread; the fix processor's delivery decides the fix at once).
private final class ReplaySource: ThreadExecutorSource, @unchecked Sendable {
    private let sink: any ElementSink<Location>
    private let schedule: ReplaySchedule
    /// The next location to deliver; read and written on the executor's thread only.
    private var next = 0
    /// When the first fix is due (the executor's clock), set at the first wait.
    private var start: UInt64?

    init(_ schedule: ReplaySchedule, into sink: any ElementSink<Location>) {
        self.schedule = schedule
        self.sink = sink
    }

    func nextWait() -> ThreadExecutorWait? {
        // A finished sink (its consumer gone) detaches the source.
        guard next < schedule.locations.count, !sink.isFinished else { return nil }
        let start = self.start ?? ThreadExecutor.now()
        self.start = start
        return ThreadExecutorWait(deadline: start + schedule.offsets[next])
    }

    func fire(readable: Bool) {
        guard next < schedule.locations.count else { return }
        let location = schedule.locations[next]
        next += 1
        sink.accept(location)
    }

    func detached() { sink.finish() }
}

/// Sleeps the replay's thread until a fix is due, or until the stream has ended.
private final class ReplayPacer: Sendable {
    private let ended = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)

    /// False once the stream has ended: the thread stops.
    func wait(until due: DispatchTime) -> Bool {
        while !ended.load(ordering: .acquiring) {
            guard DispatchTime.now() < due else { return true }
            _ = wake.wait(timeout: due)
        }
        return false
    }

    func end() {
        ended.store(true, ordering: .releasing)
        wake.signal()
    }
}
