import Foundation
import TestSupport
import Testing

@testable import GeofenceCore

/// GPS time is the truth once it is present (issue 31): a receiver that sends GGA before RMC has no date
/// in its first epoch, and that fix, placed at the wall clock, used to make every later GPS time a step
/// back, so the whole run followed the wall clock (events a day late, schedules and expiry wrong).
@Suite(.offTheCooperativePool(.computing)) struct GPSTimeTimelineTests {
    /// The drive's GPS time: 2026-11-22 08:00 UTC.
    let drive = Date(timeIntervalSince1970: 1_795_334_400)

    /// Three timeless epochs, then GPS time at 1 Hz for a minute, then one more timeless epoch; the
    /// timeline times of the fixes that were placed (nil where held back).
    func run(wallClock: Date, floor: Date? = nil) -> [Date?] {
        var clock = FixClock(resumingAfter: floor)
        var placed: [Date?] = []
        for k in 0..<3 {
            placed.append(clock.place(gpsTime: nil, received: UInt64(k) * 1_000_000_000, wallClock: wallClock)?.0)
        }
        for k in 3..<63 {
            let gps = drive.addingTimeInterval(Double(k))
            placed.append(clock.place(gpsTime: gps, received: UInt64(k) * 1_000_000_000, wallClock: wallClock)?.0)
        }
        placed.append(clock.place(gpsTime: nil, received: 63_500_000_000, wallClock: wallClock)?.0)
        return placed
    }

    @Test(arguments: [
        ("a day ahead (the capture replayed the next day)", 86_400.0),
        ("a minute behind (a drifting clock)", -60.0),
    ])
    func theTimelineIsGPSTimeWhateverTheWallClockSays(_ label: String, wallOffset: Double) {
        let placed = run(wallClock: drive.addingTimeInterval(wallOffset))
        #expect(placed.prefix(3).allSatisfy { $0 == nil }, "\(label): timeless before the first GPS time: held back")
        for k in 3..<63 {
            #expect(placed[k] == drive.addingTimeInterval(Double(k)), "\(label): fix \(k) is at its GPS time")
        }
        #expect(placed[63] == drive.addingTimeInterval(63.5), "\(label): a later timeless fix goes by elapsed time")
    }

    @Test func anUnsetWallClockChangesNothing() {
        let placed = run(wallClock: Date(timeIntervalSince1970: 0))
        #expect(placed.prefix(3).allSatisfy { $0 == nil })
        #expect(placed[3] == drive.addingTimeInterval(3) && placed[62] == drive.addingTimeInterval(62))
    }

    @Test func aReceiverThatNeverGivesTimeIsPlacedByTheWallClockAfterTheWait() {
        let wall = drive
        var clock = FixClock()
        let wait = Int(FixClock.anchorWait)
        for k in 0..<wait {
            #expect(clock.place(gpsTime: nil, received: UInt64(k) * 1_000_000_000, wallClock: wall) == nil)
        }
        let first = clock.place(gpsTime: nil, received: UInt64(wait) * 1_000_000_000, wallClock: wall)
        #expect(first?.0 == wall && first?.1 == .receiver)
        let next = clock.place(gpsTime: nil, received: UInt64(wait + 1) * 1_000_000_000, wallClock: wall)
        #expect(next?.0 == wall.addingTimeInterval(1), "then by elapsed time")
    }

    @Test func withAnUnsetWallClockATimelessReceiverResumesAfterTheFloor() {
        let floor = drive
        var clock = FixClock(resumingAfter: floor)
        let unset = Date(timeIntervalSince1970: 0)
        #expect(clock.place(gpsTime: nil, received: 0, wallClock: unset) == nil)
        let placed = clock.place(gpsTime: nil, received: 10_000_000_000, wallClock: unset)?.0
        #expect(
            placed.map { $0 > floor && $0.timeIntervalSince(floor) < 0.01 } == true, "\(String(describing: placed))")
    }

    /// After a restart the store's floor holds; a GPS time after it is taken as it is, even when the
    /// first epochs had none.
    @Test func afterARestartGPSTimeAheadOfTheFloorIsTakenAsItIs() {
        let placed = run(wallClock: drive.addingTimeInterval(86_400), floor: drive.addingTimeInterval(-600))
        #expect(placed.prefix(3).allSatisfy { $0 == nil })
        #expect(placed[3] == drive.addingTimeInterval(3) && placed[62] == drive.addingTimeInterval(62))
    }

    /// Through the assembler, as gpsd reports a GGA-first receiver: the first TPVs have no time.
    @Test func theAssemblerHoldsBackTimelessEpochsUntilGPSTime() {
        var assembler = LocationAssembler()
        let wall = drive.addingTimeInterval(86_400)
        var times: [Date] = []
        for k in 0..<6 {
            let report = ReceiverReport(
                mode: 3, device: "/dev/ttyUSB0", time: k < 3 ? nil : drive.addingTimeInterval(Double(k)),
                latitude: 52.85, longitude: 5.31, eph: 10, receivedAtNanoseconds: UInt64(k) * 1_000_000_000)
            if case .location(let l)? = assembler.assemble(report, wallClock: wall) { times.append(l.timestamp) }
        }
        #expect(times == (3..<6).map { drive.addingTimeInterval(Double($0)) })
    }
}
