import Foundation
import GPSD
import GPSDTestSupport
import GeofenceCore
import LocalServers
import TestSupport
import Testing

/// What gpsd and receivers do to a vehicle computer, each against a real gpsd of our own.
@Suite(.offTheCooperativePool(.waiting), .serialized) struct GPSDFaultTests {
    @Test(arguments: SourceReading.allCases)
    func gpsdKilledAndRestartedMidStreamIsBackWithinTwoSeconds(reading: SourceReading) async throws {
        let rig = try GPSDRig(log: "bundg_zeus_9", interval: 0.0005)
        defer { rig.stop() }
        let recorder = SourceRecorder(rig.configuration(), reading: reading)
        #expect(await recorder.wait(30) { $0.locations.count >= 10 })
        rig.gpsd.kill()
        #expect(await recorder.wait(30) { $0.statuses.contains { $0.state == .gpsdUnavailable } })
        let before = recorder.locations.count
        try await Task.sleep(for: .seconds(1))
        // Timed on the reader thread's clock (a busy test machine may wake this task late), from just
        // before gpsd is started: the source may be back before `start()` has returned.
        let restarted = MonotonicClock.now()
        try rig.gpsd.start()
        #expect(await recorder.wait(30) { $0.locations.count > before })
        let first = try #require(recorder.locations.dropFirst(before).first?.receivedAtNanoseconds)
        #expect(
            Int64(first) - Int64(restarted) < 2_000_000_000,
            "first location \(Double(Int64(first) - Int64(restarted)) / 1e9) s after gpsd's return")
        _ = await recorder.wait(20) { _ in rig.feed.linesSent == rig.feed.lineCount }
        try await Task.sleep(for: .milliseconds(300))
        await recorder.stop()
        let locations = recorder.locations
        #expect(locations.count > 100, "\(locations.count) locations across the restart")
        for (a, b) in zip(locations, locations.dropFirst()) { #expect(b.timestamp > a.timestamp) }
        let states = recorder.statuses.map(\.state)
        let lost = try #require(states.firstIndex(of: .gpsdUnavailable))
        #expect(states[..<lost].contains(.fix))
        #expect(states[lost...].contains(.fix), "fix again after the restart: \(states)")
    }

    @Test func gpsdAbsentAtStartIsRetriedAndReported() async throws {
        let feed = try NMEAFeed(log: GPSDFixtures.log("nmea-rtk"))
        defer { feed.stop() }
        let gpsd = try LocalGPSD(sources: [feed.url])
        defer { gpsd.stop() }
        let recorder = SourceRecorder(GPSSourceConfiguration(host: "127.0.0.1", port: gpsd.port))
        #expect(await recorder.wait(30) { $0.statuses.contains { $0.state == .gpsdUnavailable } })
        let status = try #require(recorder.statuses.first { $0.state == .gpsdUnavailable })
        #expect(status.detail?.contains("can't connect") == true, "libgps's own reason: \(status.detail ?? "")")
        try await Task.sleep(for: .seconds(1.5))
        let started = MonotonicClock.now()
        try gpsd.start()
        #expect(await recorder.wait(30) { !$0.locations.isEmpty })
        let first = try #require(recorder.locations.first?.receivedAtNanoseconds)
        #expect(
            Int64(first) - Int64(started) < 2_000_000_000,
            "first location \(Double(Int64(first) - Int64(started)) / 1e9) s after gpsd started")
        await recorder.stop()
    }

    @Test func deviceRemovedThroughTheControlSocketIsReported() async throws {
        let rig = try GPSDRig(log: "bundg_zeus_9", interval: 0.001)
        defer { rig.stop() }
        let recorder = SourceRecorder(rig.configuration())
        #expect(await recorder.wait(30) { $0.locations.count >= 5 })
        try rig.gpsd.control("-\(rig.feed.url)")
        #expect(await recorder.wait(30) { $0.statuses.last?.state == .deviceRemoved })
        let removed = try #require(recorder.statuses.last)
        #expect(removed.device == rig.feed.url)
        let count = recorder.locations.count
        try await Task.sleep(for: .milliseconds(500))
        #expect(recorder.locations.count == count, "no location after the receiver went away")
        await recorder.stop()
    }

    @Test func gpsdWithoutAReceiverIsNoDevice() async throws {
        let gpsd = try LocalGPSD(sources: [])
        try gpsd.start()
        defer { gpsd.stop() }
        let recorder = SourceRecorder(GPSSourceConfiguration(host: "127.0.0.1", port: gpsd.port))
        #expect(await recorder.wait(30) { $0.statuses.last?.state == .noDevice })
        await recorder.stop()
    }

    @Test(arguments: SourceReading.allCases)
    func aSilentReceiverTripsTheWatchdog(reading: SourceReading) async throws {
        let silent = FileManager.default.temporaryDirectory.appendingPathComponent("silent-\(UUID().uuidString).log")
        try "# a receiver that never says anything\n".write(to: silent, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: silent) }
        let feed = try NMEAFeed(log: silent)
        defer { feed.stop() }
        let gpsd = try LocalGPSD(sources: [feed.url])
        try gpsd.start()
        defer { gpsd.stop() }
        var configuration = GPSSourceConfiguration(host: "127.0.0.1", port: gpsd.port)
        configuration.noDataTimeout = 1
        let recorder = SourceRecorder(configuration, reading: reading)
        let started = ContinuousClock.now
        #expect(await recorder.wait(30) { $0.statuses.last?.state == .noData })
        #expect(ContinuousClock.now - started >= .seconds(0.9))
        #expect(recorder.locations.isEmpty)
        await recorder.stop()
    }

    /// garmin-10x loses the sky for 20 s: fix, then no fix (and no position), then a fix again.
    @Test func noFixStretchesGiveNoPositionAndAStatus() async throws {
        let rig = try GPSDRig(log: "garmin-10x")
        defer { rig.stop() }
        let recorder = SourceRecorder(rig.configuration())
        _ = await recorder.wait(30) { _ in rig.feed.linesSent == rig.feed.lineCount }
        try await Task.sleep(for: .milliseconds(300))
        await recorder.stop()
        let states = recorder.statuses.map(\.state).filter { $0 == .fix || $0 == .noFix }
        #expect(states == [.fix, .noFix, .fix], "\(states)")
        let times = recorder.locations.compactMap(\.gpsTime).map { $0.timeIntervalSince1970 }
        // 16:50:19 to 16:50:22 were mode 1: no location carries those times.
        let lost = ISO8601DateFormatter().date(from: "2030-03-03T16:50:19Z")!.timeIntervalSince1970
        #expect(!times.contains { $0 >= lost && $0 <= lost + 3 })
    }
}
