import AgentFormats
import AsyncBroadcast
import Foundation
import GeofenceCore
import Synchronization

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
    /// The pacing runs on a thread of its own, as gpsd's reader does: a fix wakes that thread and then its
    /// consumer, and nothing else. A sleeping task would wake the timer thread, a pool thread, then the
    /// consumer's: on a vehicle every thread switch costs battery. Ending the stream wakes the thread at once.
    package func stream(after: Date? = nil) -> UnboundedChannel<Location> {
        let locations = after.map { t in self.locations.filter { $0.timestamp > t } } ?? self.locations
        let factor = speedFactor
        let pacer = ReplayPacer()
        let channel = UnboundedChannel<Location>(onConsumerCancelled: { pacer.end() })
        let thread = Thread {
            defer { channel.finish() }
            guard let origin = locations.first?.timestamp else { return }
            let start = DispatchTime.now()
            for location in locations {
                let offset = location.timestamp.timeIntervalSince(origin) / factor
                let due = start + .nanoseconds(Int(min(offset * 1e9, Double(Int.max / 2))))
                // A consumer that went away ends the replay at its next fix.
                guard !channel.isFinished, pacer.wait(until: due) else { return }
                channel.yield(location)
            }
        }
        thread.name = "gpx-replay"
        thread.start()
        return channel
    }
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
