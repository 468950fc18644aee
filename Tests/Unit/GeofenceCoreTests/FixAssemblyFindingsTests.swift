import Foundation
import GeofenceCore
import TestSupport
import Testing

/// What the `Fixes` fuzz target found in the assembly of gpsd's records (Fuzz/Regressions/Fixes), pinned.
@Suite(.offTheCooperativePool(.computing)) struct FixAssemblyFindingsTests {
    let wallClock = Date(timeIntervalSince1970: 1_800_000_000)

    func fix(
        _ seconds: Double, device: String = "/dev/ttyA", received: UInt64, track: Double? = nil,
        epx: Double? = 3, epy: Double? = 3
    ) -> ReceiverReport {
        ReceiverReport(
            mode: 3, device: device, time: Date(timeIntervalSince1970: 1_800_000_000 + seconds),
            latitude: 52, longitude: 5, epx: epx, epy: epy, speed: 3, track: track, receivedAtNanoseconds: received)
    }

    func location(_ fix: AssembledFix?) -> Location? {
        if case .location(let l)? = fix { return l }
        return nil
    }

    /// A receiver that gpsd reported gone and that came back with an earlier GPS time (another session of
    /// the same device) took the timeline back: the monitors then dropped its fixes as out of order.
    @Test func aReceiverBackAfterRemovalKeepsTheTimelineMovingForward() throws {
        var assembler = LocationAssembler()
        let before = try #require(location(assembler.assemble(fix(100, received: 1_000_000_000), wallClock: wallClock)))
        assembler.removed(device: "/dev/ttyA")
        let after = try #require(location(assembler.assemble(fix(40, received: 3_000_000_000), wallClock: wallClock)))
        #expect(after.timestamp > before.timestamp)
        #expect(after.timestamp.timeIntervalSince(before.timestamp) == 2, "moved on by the monotonic time elapsed")
    }

    /// A course is 0 up to 360; a receiver's 400 or -5 was passed on as a course.
    @Test(arguments: [(400.0, -1.0), (-5, -1), (360, 0), (359.5, 359.5), (0, 0)])
    func aCourseOutsideACircleIsNoCourse(track: Double, course: Double) throws {
        var assembler = LocationAssembler()
        let l = try #require(location(assembler.assemble(fix(1, received: 1, track: track), wallClock: wallClock)))
        #expect(l.course == course)
    }

    /// An accuracy of 0 (some receivers' "not computed") claimed a perfect position.
    @Test func aZeroAccuracyIsNoAccuracy() throws {
        var assembler = LocationAssembler()
        let l = try #require(location(assembler.assemble(fix(1, received: 1, epx: 0, epy: 0), wallClock: wallClock)))
        #expect(l.horizontalAccuracy == -1)
        assembler.note(
            noise: PseudorangeNoise(
                device: "/dev/ttyA", time: Date(timeIntervalSince1970: 1_800_000_002), latitudeSigma: 0,
                longitudeSigma: 0))
        let withGST = try #require(
            location(assembler.assemble(fix(2, received: 2, epx: 6, epy: 8), wallClock: wallClock)))
        #expect(
            withGST.horizontalAccuracy == 10 / AccuracyModel.twoDimensional95,
            "the report's own figure, not the GST's zero")
    }
}

/// What the soak found (`geofence-bench soak`): after a SIGKILL, an agent whose timeline had been moved on
/// (its fixes' GPS time behind the clock it first placed them by) started a new timeline behind the one it
/// had stored, and the restored monitors refused every fix as out of order. The timeline now resumes
/// after the store's last fix time.
@Suite(.offTheCooperativePool(.computing)) struct TimelineResumeTests {
    let floor = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aGPSTimeBehindTheFloorIsMovedOnJustAfterIt() {
        var clock = FixClock(resumingAfter: floor)
        let (first, source) = clock.place(
            gpsTime: floor.addingTimeInterval(-86_400), received: 5_000_000_000, wallClock: floor)!
        #expect(first > floor && first.timeIntervalSince(floor) < 0.01)
        #expect(source == .adjusted)
        let (second, _) = clock.place(
            gpsTime: floor.addingTimeInterval(-86_399), received: 6_000_000_000, wallClock: floor)!
        #expect(abs(second.timeIntervalSince(first) - 1) < 1e-6, "then it advances with the GPS time")
    }

    @Test func aGPSTimeAheadOfTheFloorIsKept() {
        var clock = FixClock(resumingAfter: floor)
        let gps = floor.addingTimeInterval(30)
        #expect(clock.place(gpsTime: gps, received: 1, wallClock: gps)! == (gps, .gps))
    }

    @Test func theAssemblerResumesEveryReceiverAfterTheFloor() throws {
        var settings = LocationAssembler.Settings()
        settings.timelineFloor = floor
        var assembler = LocationAssembler(settings: settings)
        let report = ReceiverReport(
            mode: 3, device: "/dev/ttyB", time: floor.addingTimeInterval(-3_600), latitude: 52, longitude: 5,
            epx: 3, epy: 3, receivedAtNanoseconds: 1_000)
        guard case .location(let l)? = assembler.assemble(report, wallClock: floor) else {
            Issue.record("no location")
            return
        }
        #expect(l.timestamp > floor)
    }
}
