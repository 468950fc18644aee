import Foundation
import TestSupport
import Testing

@testable import GeofenceAgent

#if canImport(Glibc)
    import Glibc
#endif

/// The inbox is listed only when its directory's time moved, and a time too recent to trust is never
/// taken as settled: no request is ever left unseen.
@Suite(.offTheCooperativePool(.computing)) struct InboxScanGateTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gate-\(UUID().uuidString)").path

    /// Sets the directory's modification time `seconds` into the past.
    func age(_ seconds: Int) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let past = timespec(tv_sec: now.tv_sec - seconds, tv_nsec: now.tv_nsec)
        let times = [past, past]
        #expect(utimensat(AT_FDCWD, directory, times, 0) == 0)
    }

    @Test func noInboxIsNeverListed() {
        var gate = InboxScanGate()
        let next = gate.due(directory)
        #expect(next == nil)
    }

    @Test func aSettledQuietInboxIsSkippedUntilSomethingArrives() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        age(10)
        var gate = InboxScanGate()
        let due = gate.due(directory)
        let time = try #require(due)
        gate.listed(at: time, foundWork: false)
        let next = gate.due(directory)
        #expect(next == nil, "nothing moved since a listing that found nothing")
        // A request arrives as the CLI leaves it: written aside, then renamed in.
        let request = (directory as NSString).appendingPathComponent("add-1.geojson")
        try "{}".write(toFile: request + ".tmp", atomically: false, encoding: .utf8)
        #expect(rename(request + ".tmp", request) == 0)
        let afterRequest = gate.due(directory)
        #expect(afterRequest != nil)
    }

    @Test func aRecentTimeIsNeverTakenAsSettled() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var gate = InboxScanGate()
        // Listed while a request is still being written: a rename within the same clock tick would leave
        // the directory's time as it is, so the next round lists again.
        let due = gate.due(directory)
        let time = try #require(due)
        gate.listed(at: time, foundWork: false)
        let next = gate.due(directory)
        #expect(next != nil)
    }

    @Test func aListingThatFoundWorkIsFollowedByAnother() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        age(10)
        var gate = InboxScanGate()
        let due = gate.due(directory)
        let time = try #require(due)
        gate.listed(at: time, foundWork: true)
        let next = gate.due(directory)
        #expect(next != nil)
    }
}
