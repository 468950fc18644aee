import AgentFormats
import Foundation
import GPSD
import GeofenceAgent
import GeofenceCore
import Logging
import Synchronization
import ThreadExecution

/// `geofence-agent locations`: what the agent sees from gpsd, one location per line after coalescing and
/// filtering. What a technician runs when a vehicle's geofences misbehave.
package enum LocationsJob {
    package struct Options: Sendable {
        package var host = "127.0.0.1"
        package var port = 2947
        package var device: String?
        package var count: Int?
        package var timeout: Double?
        package var json = false
        /// Print live updates of this preset (with `isStationary`) instead of every location.
        package var live: LiveConfiguration?
        package init() {}
    }

    /// Prints locations until `count` or `timeout`. Exit status 0 when at least one location was seen
    /// (or `count` reached), 1 when none came, with gpsd's status on stderr.
    package static func run(
        _ options: Options, logger: Logger,
        emit: @escaping @Sendable (String) -> Void, warn: @escaping @Sendable (String) -> Void
    ) async throws(AgentError) {
        var configuration = GPSSourceConfiguration(host: options.host, port: options.port, device: options.device)
        configuration.noDataTimeout = 5
        let source = GPSLocationSource(configuration: configuration, logger: logger)
        let locations = source.locationChannel()
        let statuses = source.statusUpdates()
        let lastStatus = LastStatus()
        // Not in the group below: a reader thread stuck in a blocking connect (a host that drops SYNs, a
        // listener that never accepts) would hold the group for minutes after the timeout asked it to stop.
        // The command ends at its count or timeout whatever the thread does; the process's exit ends it.
        let runner = Task(executorPreference: PoolExecutor.preferred) { try? await source.run() }
        defer { runner.cancel() }
        let seen = await withTaskGroup(of: Int?.self) { group -> Int in
            group.addTask {
                for await status in statuses {
                    if status.state != .stopped { lastStatus.set(status) }
                    warn("gps: \(status.state.rawValue)\(status.detail.map { ": \($0)" } ?? "")")
                }
                return nil
            }
            group.addTask {
                var printed = 0
                var filter = options.live.map { LiveUpdateFilter(configuration: $0) }
                var stationary = StationaryDetector(policy: LiveUpdatePolicy())
                for await location in locations {
                    let update: LiveUpdate
                    if filter != nil {
                        guard let u = filter!.update(location) else { continue }
                        update = u
                    } else {
                        update = LiveUpdate(location: location, isStationary: stationary.update(location))
                    }
                    emit(options.json ? jsonLine(update) : textLine(update))
                    printed += 1
                    if let count = options.count, printed >= count { break }
                }
                source.stop()
                return printed
            }
            if let timeout = options.timeout {
                group.addTask {
                    try? await Task.sleep(for: .seconds(timeout), clock: .serialTimer)
                    source.stop()
                    return nil
                }
            }
            // The first task to finish with an answer (the count reached, or the timeout's nil after it
            // stopped the source) ends the others: the stream loops end when cancelled.
            var printed = 0
            while let result = await group.next() {
                if let result { printed = result }
                group.cancelAll()
            }
            return printed
        }
        if seen == 0 {
            let status = lastStatus.get() ?? source.status
            throw AgentError(
                "no location from gpsd at \(options.host):\(options.port)\(options.timeout.map { " within \($0) s" } ?? ""): gps \(status.state.rawValue)\(status.detail.map { ": \($0)" } ?? "")",
                exitCode: 1)
        }
    }

    /// One location as a JSON object: `time` is the GPS time gpsd reported (null when it had none).
    package static func jsonLine(_ update: LiveUpdate) -> String {
        let l = update.location
        var line = JSONLine()
        line.add("time", orNull: l.gpsTime.map(iso8601))
        line.add("timeline", iso8601(l.timestamp))
        line.add("lat", l.coordinate.latitude)
        line.add("lon", l.coordinate.longitude)
        line.add("mode", l.mode.rawValue)
        line.add("horizontalAccuracy", orNull: l.horizontalAccuracy, negativeIsUnknown: true)
        line.add("verticalAccuracy", orNull: l.verticalAccuracy, negativeIsUnknown: true)
        line.add("altHAE", orNull: l.altitudeHAE)
        line.add("altMSL", orNull: l.altitudeMSL)
        line.add("speed", orNull: l.speed, negativeIsUnknown: true)
        line.add("speedAccuracy", orNull: l.speedAccuracy, negativeIsUnknown: true)
        line.add("course", orNull: l.course, negativeIsUnknown: true)
        line.add("courseAccuracy", orNull: l.courseAccuracy, negativeIsUnknown: true)
        line.add("climb", orNull: l.climb)
        line.add("satellitesUsed", orNull: l.satellitesUsed)
        line.add("isStationary", update.isStationary)
        line.add("device", orNull: l.device)
        return line.text
    }

    package static func textLine(_ update: LiveUpdate) -> String {
        let l = update.location
        func f(_ v: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", v) }
        let time = l.gpsTime.map(iso8601) ?? "(no GPS time)"
        let accuracy = l.horizontalAccuracy >= 0 ? "±\(f(l.horizontalAccuracy, 1)) m" : "± ?"
        let speed = l.speed >= 0 ? "\(f(l.speed, 1)) m/s" : "? m/s"
        let course = l.course >= 0 ? "\(f(l.course, 0))°" : "?°"
        return
            "\(time)  \(f(l.coordinate.latitude, 7)) \(f(l.coordinate.longitude, 7))  \(l.mode == .threeD ? "3D" : "2D")  \(accuracy)  \(speed)  \(course)\(update.isStationary ? "  stationary" : "")  \(l.device ?? "")"
    }
}

/// The last status before the source stopped, for the error message.
private final class LastStatus: Sendable {
    private let value = Mutex<GPSStatus?>(nil)
    func set(_ status: GPSStatus) { value.withLock { $0 = status } }
    func get() -> GPSStatus? { value.withLock { $0 } }
}
