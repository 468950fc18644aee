import Foundation
import TestSupport
import Testing

@testable import GeofenceCore

/// The motion check's verdicts, fix by fix, on hand-made drives: a vehicle heading east at 15 m/s with
/// a 2.5 m receiver whose positions are exact unless a test moves them.
@Suite(.offTheCooperativePool(.computing)) struct MotionCheckTests {
    static let start = Coordinate(latitude: 52.37, longitude: 4.89)

    func drive(_ k: Int, aside: Double = 0, speed: Double = 15, course: Double = 90, dt: Double = 1) -> Location {
        let along = offset(Self.start, metres: speed * Double(k) * dt, bearing: 90)
        return Location(
            coordinate: offset(along, metres: aside, bearing: 0), horizontalAccuracy: 2.5, speed: speed,
            course: course, timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(k) * dt))
    }

    func verdicts(_ fixes: [Location], _ settings: MotionCheckSettings = MotionCheckSettings()) -> [MotionVerdict?] {
        var check = MotionCheck(settings: settings, correlationTime: 60, unknownAccuracy: 30)
        return fixes.map { check.check($0) }
    }

    @Test func aSteadyDriveIsConsistentAfterItsFirstFix() {
        let v = verdicts((0..<60).map { drive($0) })
        #expect(v.first == .reacquiring)
        #expect(v.dropFirst().allSatisfy { $0 == .consistent })
    }

    @Test func aPullAsideIsAnExcursionUntilTheFixAfterItEnds() {
        // 60 m north for fixes 30...39 (a jump, no ramp): those ten and the first fix back.
        let v = verdicts((0..<60).map { drive($0, aside: (30..<40).contains($0) ? 60 : 0) })
        #expect(v[29] == .consistent)
        #expect(v[30...40].allSatisfy { $0 == .excursion })
        #expect(v[41...].allSatisfy { $0 == .consistent })
    }

    @Test func aRampIsCaughtAtItsFirstStepBeyondTheNoise() {
        // Two fixes' errors of a 2.5 m receiver differ by at most 10.7 m at 0.9999 (taken as independent):
        // a ramp of 15 m a second is caught at its first step, one of 10 m a second at its second, 20 m
        // from the anchor.
        let fast = verdicts((0..<40).map { drive($0, aside: $0 >= 20 ? Double($0 - 19) * 15 : 0) })
        #expect(fast[19] == .consistent)
        #expect(fast[20] == .excursion)
        let slow = verdicts((0..<40).map { drive($0, aside: $0 >= 20 ? Double($0 - 19) * 10 : 0) })
        #expect(slow[19] == .consistent && slow[20] == .consistent)
        #expect(slow[21] == .excursion)
    }

    @Test func withoutDopplerNothingIsChecked() {
        let fixes = (0..<20).map { k -> Location in
            var f = drive(k, aside: k == 10 ? 80 : 0)
            f.course = -1
            return f
        }
        #expect(verdicts(fixes).allSatisfy { $0 == .noDoppler })
    }

    @Test func atRestNothingIsCheckedAndTheTrackFollowsTheRest() {
        var fixes = (0..<10).map { drive($0) }
        // Stopped, its positions wandering 30 m: stationary, not an excursion.
        let stop = fixes.last!.coordinate
        for k in 10..<20 {
            var f = drive(k, speed: 0.1)
            f.coordinate = offset(stop, metres: Double(k - 10) * 3, bearing: 0)
            fixes.append(f)
        }
        let v = verdicts(fixes)
        // From 15 m/s to a standstill in a second is faster than a vehicle brakes: the check starts again.
        #expect(v[10] == .reacquiring)
        #expect(v[11..<20].allSatisfy { $0 == .stationary })
    }

    @Test func aGapStartsANewTrack() {
        // A tunnel: 30 s without fixes, and the vehicle comes out 100 m off the carried-forward line.
        var fixes = (0..<10).map { drive($0) }
        fixes += (40..<50).map { drive($0, aside: 100) }
        let v = verdicts(fixes)
        #expect(v[10] == .reacquiring)
        #expect(v[11...].allSatisfy { $0 == .consistent })
    }

    @Test func aDisagreementLongerThanTheLimitIsWhereTheVehicleIs() {
        var settings = MotionCheckSettings()
        settings.maximumExcursion = 20
        // Followed for 100 s, then 50 m north for good: 20 s of excursion, then a new track there.
        let v = verdicts((0..<160).map { drive($0, aside: $0 >= 100 ? 50 : 0) }, settings)
        #expect(v[100...120].allSatisfy { $0 == .excursion })
        #expect(v[121] == .reacquiring)
        #expect(v[122...].allSatisfy { $0 == .consistent })
    }

    @Test func aTrackBegunDuringAnExcursionGivesWaySooner() {
        // The first 5 fixes are 60 m aside (the check started inside an episode): once the true positions
        // have disagreed for longer than that track had been followed, they become the track.
        let v = verdicts((0..<40).map { drive($0, aside: $0 < 5 ? 60 : 0) })
        #expect(v[0] == .reacquiring)
        #expect(v[1..<5].allSatisfy { $0 == .consistent })
        #expect(v[5...10].allSatisfy { $0 == .excursion })
        #expect(v[11] == .reacquiring)
        #expect(v[12...].allSatisfy { $0 == .consistent })
    }

    @Test func aVelocityNoVehicleCouldChangeToStartsANewTrack() {
        // A GPX whose course flips from east to west in one fix at a turn (30 m/s in a second): nothing can
        // be carried across that, so the check starts again there instead of calling the way back aside.
        var fixes = (0..<20).map { drive($0) }
        let turn = fixes.last!.coordinate
        for k in 20..<40 {
            var f = drive(k, course: 270)
            f.coordinate = offset(turn, metres: 15 * Double(k - 19), bearing: 270)
            fixes.append(f)
        }
        let v = verdicts(fixes)
        #expect(v[20] == .reacquiring)
        #expect(v[21...].allSatisfy { $0 == .consistent })
    }

    @Test func fixesItCannotUseChangeNothing() {
        var check = MotionCheck(configuration: MonitorConfiguration())
        #expect(check.check(drive(0)) == .reacquiring)
        #expect(check.check(drive(0)) == nil)
        var noFix = drive(1)
        noFix.mode = .noFix
        #expect(check.check(noFix) == nil)
        #expect(check.check(drive(1)) == .consistent)
    }

    @Test func offItJudgesNothing() {
        var settings = MotionCheckSettings()
        settings.enabled = false
        #expect(verdicts((0..<5).map { drive($0) }, settings).allSatisfy { $0 == nil })
    }

    @Test func anExcursionIsNoEvidenceForTheMonitors() {
        // A 40 m circle 30 m north of the road: the pull puts three fixes inside it, the truth never is.
        var monitors = MonitorSet(configuration: .eachFixAlone)
        let centre = offset(offset(Self.start, metres: 15 * 30, bearing: 90), metres: 70, bearing: 0)
        monitors.add(try! .circle(center: centre, radius: 40), identifier: "yard", monitor: "default")
        var kinds: [EventKind] = []
        var rejected: [FixRejection] = []
        for k in 0..<60 {
            let r = monitors.process(drive(k, aside: (29...31).contains(k) ? 70 : 0))
            kinds += r.steps.flatMap(\.events).map(\.kind)
            if let reason = r.rejection { rejected.append(reason) }
            #expect(r.location.motionVerdict != nil)
        }
        #expect(kinds == [.initial])
        #expect(rejected == Array(repeating: .excursion, count: 4))
        var configuration = MonitorConfiguration.eachFixAlone
        configuration.motionCheck.enabled = false
        var without = MonitorSet(configuration: configuration)
        without.add(try! .circle(center: centre, radius: 40), identifier: "yard", monitor: "default")
        let falseOnes = (0..<60).flatMap { k in
            without.process(drive(k, aside: (29...31).contains(k) ? 70 : 0)).steps.flatMap(\.events).map(\.kind)
        }
        #expect(falseOnes == [.initial, .enter, .exit])
    }
}
