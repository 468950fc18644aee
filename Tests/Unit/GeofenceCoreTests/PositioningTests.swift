import Foundation
import PropertyBased
import ReceiverSimulation
import TestSupport
import Testing

@testable import GeofenceCore

/// The rules between gpsd's reports and the agent's locations.
@Suite(.offTheCooperativePool(.computing)) struct PositioningTests {
    let t0 = Date(timeIntervalSince1970: 1_534_758_457)

    func report(
        _ t: Double?, lat: Double = 52.85, mode: Int = 3, device: String = "/dev/ttyUSB0", at ns: UInt64 = 0,
        speed: Double? = nil, track: Double? = nil
    ) -> ReceiverReport {
        ReceiverReport(
            mode: mode, device: device, time: t.map { t0.addingTimeInterval($0) }, latitude: lat, longitude: 5.31,
            eph: 10, speed: speed, track: track, receivedAtNanoseconds: ns)
    }

    @Test func theLastReportOfAnEpochStandsForIt() {
        var c = EpochCoalescer(quietPeriod: 0.05)
        do {
            let value = c.add(report(0, lat: 1))
            #expect(value.isEmpty)
        }
        do {
            let value = c.add(report(0, lat: 2))
            #expect(value.isEmpty)
        }
        do {
            let value = c.add(report(1, lat: 3))
            #expect(value.map(\.latitude) == [2], "a new time closes the epoch with its last report")
        }
        // Another device's reports do not close this one's epoch.
        do {
            let value = c.add(report(5, lat: 9, device: "/dev/ttyUSB1", at: 5))
            #expect(value.isEmpty)
        }
        do {
            let value = c.add(report(1, lat: 4, at: 6))
            #expect(value.isEmpty)
        }
        do {
            let value = c.closeAll()
            #expect(value.map(\.latitude) == [9, 4])
        }
    }

    @Test func anEpochClosesAfterTheQuietPeriodAndRunsWithoutTimeAreOneEpoch() {
        var c = EpochCoalescer(quietPeriod: 0.05)
        do {
            let value = c.add(report(nil, lat: 1, at: 0))
            #expect(value.isEmpty)
        }
        do {
            let value = c.add(report(nil, lat: 2, at: 10_000_000))
            #expect(value.isEmpty)
        }
        do {
            let value = c.closeQuiet(now: 40_000_000)
            #expect(value.isEmpty)
        }
        #expect(c.nextDeadline == 60_000_000)
        do {
            let value = c.closeQuiet(now: 60_000_000)
            #expect(value.map(\.latitude) == [2])
        }
        do {
            let value = c.closeQuiet(now: 90_000_000)
            #expect(value.isEmpty)
        }
    }

    @Test func anEpochClosesAtTheCountItsDeviceKeptAndALateReportBreaksTheRun() {
        var c = EpochCoalescer(quietPeriod: 0.05)
        var out: [Double?] = []
        // Three epochs of two reports each: learned.
        for t in 0..<3 {
            for k in 0..<2 { out.append(c.add(report(Double(t), lat: Double(10 * t + k))).first?.latitude) }
        }
        let expected: [Double?] = [nil, nil, 1, nil, 11, nil]
        #expect(out == expected, "until learned, a new time closes the epoch")
        // The fourth epoch starts (closing the third) and closes at its own second report.
        #expect(c.add(report(3, lat: 30)).map(\.latitude) == [21])
        #expect(c.add(report(3, lat: 31)).map(\.latitude) == [31], "closed at the learned count, without waiting")
        #expect(c.nextDeadline == nil, "nothing is left to close by quiet")
        // A third report of that epoch is late: dropped, and the run of twos is broken.
        #expect(c.add(report(3, lat: 32)).isEmpty)
        #expect(c.add(report(4, lat: 40)).isEmpty, "the epoch it would have closed was delivered")
        #expect(c.add(report(4, lat: 41)).isEmpty, "no longer learned: [2, 2, 3]")
        #expect(c.add(report(5, lat: 50)).map(\.latitude) == [41])
    }

    @Test func oneReportCanCloseThePreviousEpochAndItsOwn() {
        var c = EpochCoalescer(quietPeriod: 0.05)
        #expect(c.add(report(0, lat: 0)).isEmpty)
        for t in 1...2 { #expect(c.add(report(Double(t), lat: Double(t))).map(\.latitude) == [Double(t - 1)]) }
        // Epochs 0, 1 and 2 had one report each: the report that closes epoch 2 closes its own epoch 3 too.
        #expect(c.add(report(3, lat: 3)).map(\.latitude) == [2, 3])
        #expect(c.add(report(4, lat: 4)).map(\.latitude) == [4])
    }

    @Test func earlyCloseNeedsATimeAndCanBeTurnedOff() {
        var noTime = EpochCoalescer(quietPeriod: 0.05)
        var timed = EpochCoalescer(quietPeriod: 0.05, closesEarly: false)
        for t in 0..<6 {
            #expect(timed.add(report(Double(t), lat: Double(t))).map(\.latitude) == (t == 0 ? [] : [Double(t - 1)]))
        }
        #expect(timed.nextDeadline != nil, "turned off: the last epoch waits for the next one or quiet")
        // Runs without time are delivered by quiet; each one after that is new, never early.
        for k in 0..<6 {
            let ns = UInt64(k) * 100_000_000
            #expect(noTime.add(report(nil, lat: Double(k), at: ns)).isEmpty)
            #expect(noTime.closeQuiet(now: ns + 60_000_000).map(\.latitude) == [Double(k)])
        }
    }

    /// Any mix of epoch sizes: every epoch is delivered once, in order, and by the report that stands for
    /// it: its last, or its N-th when the three epochs before it each had N reports.
    @Test func everyEpochIsDeliveredOnceByTheReportThatStandsForIt() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            let sizes = (0..<40).map { _ in
                Int.random(in: 0..<10, using: &rng) < 7 ? 2 : Int.random(in: 1...4, using: &rng)
            }
            var c = EpochCoalescer(quietPeriod: 0.05)
            var delivered: [Double] = []
            for (t, size) in sizes.enumerated() {
                for k in 0..<size {
                    delivered += c.add(report(Double(t), lat: Double(t * 10 + k))).map { $0.latitude! }
                }
            }
            delivered += c.closeAll().map { $0.latitude! }
            var expected: [Double] = []
            for (t, size) in sizes.enumerated() {
                let before = sizes[max(0, t - 3)..<t]
                let learned = before.count == 3 && Set(before).count == 1 ? before.first : nil
                expected.append(Double(t * 10 + min(size, learned ?? size) - 1))
            }
            #expect(delivered == expected, "sizes \(sizes)")
        }
    }

    @Test func theTimelineOnlyMovesForward() {
        var clock = FixClock()
        let wall = Date(timeIntervalSince1970: 1_795_000_000)  // 2026
        let a = clock.place(gpsTime: t0, received: 0, wallClock: wall)!
        #expect(a.0 == t0 && a.1 == .gps)
        // bt451: the receiver's time jumps back a day; the timeline advances by the time received since.
        let b = clock.place(gpsTime: t0.addingTimeInterval(-86_400), received: 500_000_000, wallClock: wall)!
        #expect(b.1 == .adjusted)
        #expect(abs(b.0.timeIntervalSince(t0) - 0.5) < 1e-6)
        // ...and keeps GPS time's pace from the new base.
        let c = clock.place(gpsTime: t0.addingTimeInterval(-86_400 + 1), received: 900_000_000, wallClock: wall)!
        #expect(abs(c.0.timeIntervalSince(t0) - 1.5) < 1e-6)
        // A fix without time: the receive clock.
        let d = clock.place(gpsTime: nil, received: 1_900_000_000, wallClock: wall)!
        #expect(d.1 == .receiver && abs(d.0.timeIntervalSince(c.0) - 1) < 1e-6)
        // The same GPS time twice is not a step back in the timeline.
        let e = clock.place(gpsTime: t0.addingTimeInterval(-86_400 + 1), received: 1_900_000_000, wallClock: wall)!
        #expect(e.0 > d.0)
    }

    @Test func a1024WeekRolloverIsCorrectedOnlyAgainstASaneWallClock() {
        let wall = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11
        let rolled = wall.addingTimeInterval(-FixClock.gpsEra + 3600)
        #expect(FixClock.correctingRollover(rolled, wallClock: wall) == wall.addingTimeInterval(3600))
        // gpsd 3.22 already moves 2009 logs to 2029: three years ahead is not a rollover.
        let ahead = wall.addingTimeInterval(3 * 365 * 86_400)
        #expect(FixClock.correctingRollover(ahead, wallClock: wall) == ahead)
        // A 2018 replay today is old but not an era old.
        #expect(FixClock.correctingRollover(t0, wallClock: wall) == t0)
        // An unset wall clock (1970 after boot) corrects nothing.
        #expect(FixClock.correctingRollover(rolled, wallClock: Date(timeIntervalSince1970: 0)) == rolled)
    }

    @Test func accuracyIsMappedToOneSigma() {
        // ublox-neo-m9n: GST 0.98 m and 1.00 m give 1.40 m where eph says 2.565.
        let r = ReceiverReport(
            mode: 3, time: t0, latitude: 38.1, longitude: -122.6, epx: 1.619, epy: 2.077, eph: 2.565, epv: 4.772)
        let gst = PseudorangeNoise(time: t0, latitudeSigma: 0.98, longitudeSigma: 1.0, altitudeSigma: 3.1)
        #expect(abs(AccuracyModel.horizontal(r, noise: gst) - 1.40) < 0.005)
        #expect(
            abs(AccuracyModel.horizontal(r, noise: nil) - (1.619 * 1.619 + 2.077 * 2.077).squareRoot() / 2.4477) < 1e-9)
        var onlyEph = r
        onlyEph.epx = nil
        #expect(abs(AccuracyModel.horizontal(onlyEph, noise: nil) - 0.58 * 2.565) < 1e-9)
        onlyEph.eph = nil
        #expect(AccuracyModel.horizontal(onlyEph, noise: nil) == -1)
        #expect(AccuracyModel.vertical(r, noise: gst) == 3.1)
        #expect(abs(AccuracyModel.vertical(r, noise: nil) - 4.772 / 1.96) < 1e-9)
    }

    @Test func gpsdComputedSpeedSpikesAreDropped() {
        var f = SpeedSpikeFilter()
        do {
            let value = f.filter(speed: 0.3, hasCourse: true, at: t0)
            #expect(value == 0.3)
        }
        // garmin-10x at rest: gpsd derives 16.5 m/s from a position jump; no course comes with it.
        do {
            let value = f.filter(speed: 16.5, hasCourse: false, at: t0.addingTimeInterval(1))
            #expect(value == nil)
        }
        do {
            let value = f.filter(speed: 0.2, hasCourse: true, at: t0.addingTimeInterval(2))
            #expect(value == 0.2)
        }
        // The receiver's own speed, with its course, is believed within physical limits...
        do {
            let value = f.filter(speed: 15.6, hasCourse: true, at: t0.addingTimeInterval(3))
            #expect(value == 15.6)
        }
        // ...but not beyond them.
        do {
            let value = f.filter(speed: 150, hasCourse: true, at: t0.addingTimeInterval(4))
            #expect(value == nil)
        }
        do {
            let value = f.filter(speed: -1, hasCourse: true, at: t0.addingTimeInterval(5))
            #expect(value == nil)
        }
    }

    @Test func oneDeviceIsFollowedUntilItGoesStale() {
        var s = DeviceSelector(staleAfter: 3)
        do {
            let value = s.accept(device: "a", mode: 3, accuracy: 10, received: 0)
            #expect(value)
        }
        // A better receiver does not take over while the current one delivers.
        let takenOver = s.accept(device: "b", mode: 3, accuracy: 1, received: 500_000_000)
        #expect(!takenOver)
        do {
            let value = s.accept(device: "a", mode: 3, accuracy: 10, received: 1_000_000_000)
            #expect(value)
        }
        // "a" falls silent: after 3 s "b" takes over.
        do {
            let value = s.accept(device: "b", mode: 3, accuracy: 1, received: 4_500_000_000)
            #expect(value)
        }
        #expect(s.current == "b")
        // Epochs of different devices close out of order: an older report from "b" is no reason to switch.
        var late = DeviceSelector(staleAfter: 3)
        _ = late.accept(device: "a", mode: 3, accuracy: 10, received: 2_000_000_000)
        let older = late.accept(device: "b", mode: 3, accuracy: 1, received: 1_000_000_000)
        #expect(!older && late.current == "a")
        var configured = DeviceSelector(configuredPath: "a")
        let other = configured.accept(device: "b", mode: 3, accuracy: 1, received: 0)
        #expect(!other)
        do {
            let value = configured.accept(device: "a", mode: 2, accuracy: 50, received: 0)
            #expect(value)
        }
    }

    @Test func noPositionIsTakenFromANoFixReport() {
        // myguide-3100's no-fix RMC carries a position.
        var a = LocationAssembler()
        let r = report(0, mode: 1)
        do {
            let value = a.assemble(r, wallClock: t0)
            #expect(value == .noFix(device: "/dev/ttyUSB0"))
        }
    }
}

/// Live updates: presets, stationary detection and the filters, as properties.
@Suite(.offTheCooperativePool(.computing)) struct LiveUpdateTests {
    static let rest = Coordinate(latitude: 52.85, longitude: 5.31)

    @Test func noiseAtRestNeverReadsAsMotion() async {
        // A real receiver's error: Gaussian with its stated 1-sigma accuracy, correlated over 1 to 60 s, and
        // one epoch in ten claiming 1.5x better than it is. No Doppler speed: the position test alone.
        await propertyCheck(
            count: 8, input: Gen.double(in: 1...30), Gen.double(in: 1...60), Gen.int(in: 0...Int(Int32.max))
        ) { accuracy, tau, seed in
            let profile = SimulatedReceiver.Profile(
                accuracy: accuracy, correlationTime: tau, underReportingRate: 0.1, speedSigma: nil)
            var receiver = SimulatedReceiver(profile, seed: UInt64(seed))
            var detector = StationaryDetector(duration: 10)
            var moving = 0
            for k in 0..<10_000 {
                let stationary = detector.update(
                    receiver.fix(truth: Self.rest, at: Date(timeIntervalSince1970: 1_700_000_000 + Double(k))))
                if k >= 10 && !stationary { moving += 1 }
            }
            #expect(moving == 0, "\(profile): \(moving) of 10,000 fixes at rest read as motion")
        }
    }

    @Test func drivingOffEndsTheRestWithinTwoFixes() async {
        await propertyCheck(count: 50, input: Gen.double(in: 3...30), Gen.double(in: 1...15), Gen.double(in: 0...360)) {
            speed, accuracy, bearing in
            var detector = StationaryDetector(duration: 10)
            for k in 0..<30 {
                _ = detector.update(fix(Self.rest.latitude, Self.rest.longitude, t: Double(k), accuracy: accuracy))
            }
            do {
                let value = detector.update(fix(Self.rest.latitude, Self.rest.longitude, t: 30, accuracy: accuracy))
                #expect(value)
            }
            // Leaving: the first fix beyond the rest circle may be noise, the second is not.
            let circle = detector.radius(forAccuracy: accuracy)
            var k = 31.0
            var moved = 0.0
            var stationaryFixes = 0
            while moved < circle * 1.35 + 3 * speed {
                moved += speed
                let q = offset(Self.rest, metres: moved, bearing: bearing)
                if detector.update(fix(q.latitude, q.longitude, t: k, accuracy: accuracy)) { stationaryFixes += 1 }
                k += 1
            }
            // Inside the circle, then one fix of grace. The circle is around the rest's mean, which the fixes
            // that still agree drag along: by at most a third of the way after a rest of 30 fixes.
            #expect(stationaryFixes <= Int((circle * 1.35 / speed).rounded(.up)) + 1)
            let q = offset(Self.rest, metres: moved + speed, bearing: bearing)
            let stillStationary = detector.update(fix(q.latitude, q.longitude, t: k, accuracy: accuracy))
            #expect(!stillStationary)
        }
    }

    @Test func distanceFilterMinimumIntervalAndHeartbeat() {
        var policy = LiveUpdatePolicy()
        policy.distanceFilter = 49
        policy.minimumInterval = 5
        policy.heartbeat = 60
        var filter = LiveUpdateFilter(policy: policy)
        var delivered: [Double] = []
        // 10 m/s for 100 s: every 5 s and 49 m.
        for k in 0...100 {
            let q = offset(Self.rest, metres: Double(k) * 10, bearing: 90)
            if filter.update(fix(q.latitude, q.longitude, t: Double(k))) != nil { delivered.append(Double(k)) }
        }
        #expect(delivered == stride(from: 0.0, through: 100, by: 5).map { $0 })
        // Parked: nothing but the stop itself and then the heartbeat.
        var parked = LiveUpdateFilter(policy: policy)
        var updates: [LiveUpdate] = []
        for k in 0...200 {
            if let u = parked.update(fix(Self.rest.latitude, Self.rest.longitude, t: Double(k))) { updates.append(u) }
        }
        #expect(updates.map { $0.location.timestamp.timeIntervalSince1970 - 1_700_000_000 } == [0, 10, 70, 130, 190])
        #expect(updates.map(\.isStationary) == [false, true, true, true, true])
    }

    @Test func significantChangesAreAtLeast500mAnd5MinutesApart() async {
        await propertyCheck(count: 30, input: Gen.double(in: 0.5...40), Gen.double(in: 0...360)) { speed, bearing in
            var filter = LiveUpdateFilter(policy: .significantChanges)
            var last: Location?
            var count = 0
            for k in 0...3600 {
                let q = offset(Self.rest, metres: Double(k) * speed, bearing: bearing)
                guard let u = filter.update(fix(q.latitude, q.longitude, t: Double(k))) else { continue }
                count += 1
                if let last {
                    #expect(u.location.timestamp.timeIntervalSince(last.timestamp) >= 300)
                    #expect(Geodesic.distance(last.coordinate, u.location.coordinate) >= 500)
                }
                last = u.location
            }
            // An hour at this speed allows this many significant changes, and they come.
            let expected = min(3600 / 300, Int(3600 * speed / 500))
            #expect(count >= expected, "speed \(speed): \(count) updates")
        }
    }

    @Test func headingFilterDeliversTurnsOnly() {
        var f = HeadingFilter(headingFilter: 10)
        func l(_ course: Double, speed: Double = 5) -> Location {
            Location(coordinate: Self.rest, horizontalAccuracy: 5, speed: speed, course: course, timestamp: Date())
        }
        do {
            let value = f.update(l(355))
            #expect(value == 355)
        }
        do {
            let value = f.update(l(3))
            #expect(value == nil, "8° across north is under the filter")
        }
        do {
            let value = f.update(l(6))
            #expect(value == 6)
        }
        do {
            let value = f.update(l(90, speed: 0.2))
            #expect(value == nil, "a course at walking-pace noise is not a heading")
        }
        do {
            let value = f.update(l(-1))
            #expect(value == nil)
        }
    }

    @Test func everyPresetIsDocumentedAndDistinct() {
        let policies = LiveConfiguration.allCases.map(\.policy)
        #expect(Set(policies.map { "\($0)" }).count == LiveConfiguration.allCases.count)
    }
}
