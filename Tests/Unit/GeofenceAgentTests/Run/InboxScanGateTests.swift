import AgentTestSupport
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

    /// Makes the inbox, its time `age` seconds in the past (0: now), and a gate that listed it once and
    /// found work or not. The caller removes the directory.
    func gateAfterOneListing(age: Int, foundWork: Bool) throws -> InboxScanGate {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if age > 0 {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let past = timespec(tv_sec: now.tv_sec - age, tv_nsec: now.tv_nsec)
            #expect(utimensat(AT_FDCWD, directory, [past, past], 0) == 0)
        }
        var gate = InboxScanGate()
        let due = gate.due(directory)
        gate.listed(at: try #require(due), foundWork: foundWork)
        return gate
    }

    @Test func noInboxIsNeverListed() {
        var gate = InboxScanGate()
        #expect(gate.due(directory) == nil)
    }

    @Test func aSettledQuietInboxIsSkippedUntilSomethingArrives() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var gate = try gateAfterOneListing(age: 10, foundWork: false)
        let next = gate.due(directory)
        #expect(next == nil, "nothing moved since a listing that found nothing")
        // A request arrives as the CLI leaves it: written aside, then renamed in.
        let request = (directory as NSString).appendingPathComponent("add-1.geojson")
        try "{}".write(toFile: request + ".tmp", atomically: false, encoding: .utf8)
        #expect(rename(request + ".tmp", request) == 0)
        let afterRequest = gate.due(directory)
        #expect(afterRequest != nil)
    }

    /// Listed while a request is still being written: a rename within the same clock tick would leave the
    /// directory's time as it is, so the next round lists again.
    @Test func aRecentTimeIsNeverTakenAsSettled() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var gate = try gateAfterOneListing(age: 0, foundWork: false)
        let next = gate.due(directory)
        #expect(next != nil)
    }

    @Test func aListingThatFoundWorkIsFollowedByAnother() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var gate = try gateAfterOneListing(age: 10, foundWork: true)
        let next = gate.due(directory)
        #expect(next != nil)
    }
}
