import Foundation
import GPSD
import GPSDTestSupport
import GeofenceCore
import LocalServers
import TestSupport
import Testing

/// Every bundled log through a real gpsd, fed losslessly: the source's locations must be gpsd 3.22's
/// expected TPVs (`*.chk-3.22`, mode >= 2) after the documented coalescing, field by field.
@Suite(.offTheCooperativePool(.waiting)) struct ReplayAgainstGPSDTests {
    @Test(arguments: GPSDFixtures.all, SourceReading.allCases)
    func locationsMatchGPSDsExpectedOutput(log: String, reading: SourceReading) async throws {
        let expected = try ChkOracle.expected(chk: GPSDFixtures.chk(log))
        // Paced a little (5,000 lines a second, faster than any receiver): gpsd drops what a client that
        // falls behind cannot take, and on a loaded 2-core machine the reader can fall behind a burst.
        let rig = try GPSDRig(log: log, interval: 0.0002)
        defer { rig.stop() }
        // Epochs close when the next one starts, or when complete; the quiet period only closes the last
        // one. At 0.05 s a busy machine that pauses the feed mid-epoch would split an epoch in two, so
        // here it is long: the result then depends on the log alone, not on scheduling.
        var configuration = rig.configuration()
        configuration.epochQuietPeriod = 2
        let recorder = SourceRecorder(configuration, reading: reading)
        // The whole log is written once gpsd reads it; then the last epoch closes by quiet.
        let fed = await recorder.wait(30) { _ in rig.feed.linesSent == rig.feed.lineCount }
        #expect(fed, "the feed wrote \(rig.feed.linesSent) of \(rig.feed.lineCount) lines")
        _ = await recorder.wait(30) { $0.locations.count >= expected.count }
        try? await Task.sleep(for: .milliseconds(300))
        await recorder.stop()
        let got = recorder.locations
        #expect(
            got.count == expected.count,
            "\(log): \(got.count) locations, expected \(expected.count); statuses \(recorder.statuses.map { "\($0.state) \($0.detail ?? "")" })"
        )

        var speedFilter = OracleSpeedFilter()
        for (index, (location, want)) in zip(got, expected).enumerated() {
            let at = "\(log) #\(index) (\(want.time ?? "no time"))"
            #expect(location.gpsTime == want.time.flatMap(ChkOracle.date), "\(at): time")
            #expect(abs(location.coordinate.latitude - want.double("lat")!) < 1e-9, "\(at): lat")
            #expect(abs(location.coordinate.longitude - want.double("lon")!) < 1e-9, "\(at): lon")
            #expect(location.mode.rawValue == min(want.mode, 3), "\(at): mode")
            #expect(close(location.altitudeHAE, want.double("altHAE")), "\(at): altHAE")
            #expect(close(location.altitudeMSL, want.double("altMSL")), "\(at): altMSL")
            #expect(
                close(location.horizontalAccuracy, ChkOracle.horizontalAccuracy(want)),
                "\(at): horizontalAccuracy \(location.horizontalAccuracy)")
            #expect(close(location.course, want.double("track") ?? -1), "\(at): course")
            #expect(close(location.climb, want.double("climb")), "\(at): climb")
            let speed = speedFilter.expected(
                speed: want.double("speed"), hasCourse: want.double("track") != nil, at: location.timestamp)
            #expect(
                close(location.speed, speed ?? -1), "\(at): speed \(location.speed) vs \(want.double("speed") ?? -1)")
            #expect(location.device == rig.feed.url, "\(at): device")
            if index > 0 { #expect(location.timestamp > got[index - 1].timestamp, "\(at): timeline moves forward") }
        }
        // Issue 34: none of these captures has multipath, so the motion check must find no excursion in them.
        var check = MotionCheck(configuration: MonitorConfiguration())
        let verdicts = got.map { check.check($0) }
        let excursions = zip(got, verdicts).filter { $0.1 == .excursion }.map { "\($0.0.timestamp)" }
        #expect(excursions.isEmpty, "\(log): excursions at \(excursions)")
        let checked = verdicts.filter { $0 == .consistent }.count
        print("\(log): \(got.count) fixes, \(checked) checked against the motion, \(excursions.count) excursions")
        // Issue 33: trips and stops, with thresholds scaled to these few minutes of capture (a stop after
        // 30 s at rest, a trip after 100 m or 60 s). No stop begins while the receiver says the vehicle
        // moves (two fixes in a row faster than 1 m/s: garmin-10x has a lone 16 m/s spike while still);
        // the sail moves throughout and the parked u-blox never does.
        var settings = TripSettings()
        settings.minimalParkingDuration = 30
        settings.minimalTripDistance = 100
        settings.minimalTripDuration = 60
        var trips = TripDetector(settings: settings)
        var events: [TripEvent] = []
        for (fix, verdict) in zip(got, verdicts) {
            var f = fix
            f.motionVerdict = verdict
            events += trips.process(f)
        }
        let moving = Set(
            got.indices.dropLast().filter { got[$0].speed > 1 && got[$0 + 1].speed > 1 }.map { got[$0].timestamp })
        for case .stopStarted(let stop) in events {
            #expect(!moving.contains(stop.arrival), "\(log): a stop begins at \(stop.arrival) while moving")
        }
        if log == "bundg_zeus_9" {
            #expect(events.map(\.name) == ["tripStarted"], "\(log): \(events.map(\.name))")
        }
        if log == "ublox-neo-m9n-nmea" {
            #expect(events.map(\.name) == ["stopStarted"], "\(log): \(events.map(\.name))")
        }
        print("\(log): trips and stops \(events.map(\.name))")
    }

    private func close(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?): return abs(a - b) <= 1e-6 * max(1, abs(b))
        default: return false
        }
    }
}

/// The speed-spike rule, restated for the oracle: over 100 m/s, or without a course and changing by
/// more than 10 m/s² from the last kept speed within 5 s, a speed is dropped.
private struct OracleSpeedFilter {
    var last: (speed: Double, time: Date)?
    mutating func expected(speed: Double?, hasCourse: Bool, at time: Date) -> Double? {
        guard let speed else { return nil }
        if speed > 100 { return nil }
        if !hasCourse, let last {
            let dt = time.timeIntervalSince(last.time)
            if dt > 0, dt <= 5, abs(speed - last.speed) > 10 * dt { return nil }
        }
        last = (speed, time)
        return speed
    }
}
