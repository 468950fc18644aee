import Foundation
import GPSD
import GeofenceCore
import LocalServers
import Logging
import Synchronization
import Testing
import ThreadExecution

/// The bundled receiver logs (gpsd project, BSD-2-Clause: Fixtures/gpsd-logs/COPYING.gpsd).
package enum GPSDFixtures {
    package static let directory = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/gpsd-logs")
    package static func log(_ name: String) -> URL { directory.appendingPathComponent(name + ".log") }
    package static func chk(_ name: String) -> URL { directory.appendingPathComponent(name + ".log.chk-3.22") }
    package static let all = [
        "bt451", "bundg_zeus_9", "garmin-10x", "haicom-305N", "humminbird-M37", "myguide-3100",
        "nl2008u", "nmea-rtk", "rst39", "sl869", "ublox-neo-m9n-nmea",
    ]
}

/// A feed and our own gpsd reading it, stopped by PID when the test ends.
package final class GPSDRig: @unchecked Sendable {
    package let feed: NMEAFeed
    package let gpsd: LocalGPSD

    package init(log: String, interval: Double = 0) throws {
        feed = try NMEAFeed(log: GPSDFixtures.log(log), interval: interval)
        gpsd = try LocalGPSD(sources: [feed.url])
        try gpsd.start()
    }

    package func stop() {
        gpsd.stop()
        feed.stop()
    }

    package func configuration() -> GPSSourceConfiguration {
        GPSSourceConfiguration(host: "127.0.0.1", port: gpsd.port)
    }
}

/// Where a source reads gpsd's reports while connected.
package enum SourceReading: CaseIterable, Sendable, CustomTestStringConvertible {
    /// On its reader thread.
    case readerThread
    /// On a `ThreadExecutor`'s thread between its jobs, as the agent reads on its store's.
    case executor

    package var testDescription: String { self == .executor ? "on an executor's thread" : "on the reader thread" }
}

/// Everything a source delivered, gathered off the cooperative pool's back.
package final class SourceRecorder: Sendable {
    private let state = Mutex<(locations: [Location], statuses: [GPSStatus])>(([], []))
    package let source: GPSLocationSource
    /// The thread the source reads on while connected, with `.executor`.
    package let executor: ThreadExecutor?
    private let tasks = Mutex<[Task<Void, Never>]>([])

    package init(_ configuration: GPSSourceConfiguration, reading: SourceReading = .readerThread) {
        var logger = Logger(label: "test.gpsd")
        logger.logLevel = .critical
        executor = reading == .executor ? ThreadExecutor(name: "gpsd-test") : nil
        source = GPSLocationSource(configuration: configuration, logger: logger, readingOn: executor)
        let locations = source.locations()
        let statuses = source.statusUpdates()
        let a = Task { [self] in for await l in locations { state.withLock { $0.locations.append(l) } } }
        let b = Task { [self] in for await s in statuses { state.withLock { $0.statuses.append(s) } } }
        let c = Task { [source] in _ = try? await source.run() }
        tasks.withLock { $0 = [a, b, c] }
    }

    package var locations: [Location] { state.withLock { $0.locations } }
    package var statuses: [GPSStatus] { state.withLock { $0.statuses } }

    /// Stops the source and waits until every stream has ended.
    package func stop() async {
        source.stop()
        for t in tasks.withLock({ $0 }) { await t.value }
        executor?.finish()
    }

    /// Waits until `condition` holds, polling; false after `seconds`.
    package func wait(_ seconds: Double, until condition: (SourceRecorder) -> Bool) async -> Bool {
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(self)
    }
}
